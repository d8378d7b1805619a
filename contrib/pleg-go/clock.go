package main

import (
	"time"

	"github.com/kubelet-split/contrib/pleg-go/internal/leader"
	"github.com/kubelet-split/contrib/pleg-go/internal/pleg"
)

// systemClock is the real time, for the ports that take a Clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
func (systemClock) AfterFunc(d time.Duration, f func()) pleg.Timer {
	return time.AfterFunc(d, f)
}

// leaderClock is systemClock as the leader package's Clock.
type leaderClock struct{ systemClock }

func (leaderClock) AfterFunc(d time.Duration, f func()) interface{ Stop() bool } {
	return time.AfterFunc(d, f)
}

var _ pleg.Clock = systemClock{}
var _ leader.Clock = leaderClock{}
