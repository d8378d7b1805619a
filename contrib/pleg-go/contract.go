package main

// The version-skew policy (docs/adr/0034-version-skew-policy.md,
// libs/contracts skew.ts and libs/service peer-contracts.ts): this PLEG
// speaks contract CONTRACT_VERSION (default 1, the messages and records it
// reads and writes), says so in the Kubelet-Contract header of everything
// it sends and in /info, and judges every peer it hears from by the same
// n-1 rule. A peer outside the policy is logged once per peer and version,
// listed in /info and shown by the `contractVersions` readiness check as
// degraded (never failed: a peer's version must not cost the node its pods).

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"
)

const (
	hdrContract          = "Kubelet-Contract"
	buildContractVersion = 1
	oldestContract       = 1
	contractSkew         = 1
	peerForgetAfter      = 5 * time.Minute
	maxPeersOutside      = 256
)

type contractRange struct {
	Oldest int `json:"oldest"`
	Newest int `json:"newest"`
}

type contractClaim struct {
	Version int           `json:"version"`
	Accepts contractRange `json:"accepts"`
}

func claimOf(version int) contractClaim {
	return contractClaim{Version: version, Accepts: contractRange{Oldest: max(oldestContract, version-contractSkew), Newest: version}}
}

func (r contractRange) String() string {
	if r.Oldest == r.Newest {
		return strconv.Itoa(r.Oldest)
	}
	return fmt.Sprintf("%d..%d", r.Oldest, r.Newest)
}

// judgePeer is skew.ts judgePeer: ok, or why not (peer too old / too new) and the reason.
func judgePeer(self contractClaim, peer int) (bool, string, string) {
	if peer == self.Version {
		return true, "", ""
	}
	if peer < self.Version {
		if peer >= self.Accepts.Oldest {
			return true, "", ""
		}
		return false, "peer too old", fmt.Sprintf("the peer speaks contract %d; this service speaks %d and accepts %s", peer, self.Version, self.Accepts)
	}
	theirs := claimOf(peer).Accepts
	if theirs.Oldest <= self.Version {
		return true, "", ""
	}
	return false, "peer too new", fmt.Sprintf("the peer speaks contract %d, which accepts %s; this service speaks %d and accepts %s", peer, theirs, self.Version, self.Accepts)
}

var contractVersionRe = regexp.MustCompile(`^[1-9][0-9]{0,5}$`)

type peerOutside struct {
	Peer      string `json:"peer"`
	Version   int    `json:"version"`
	Why       string `json:"why"`
	Reason    string `json:"reason"`
	FirstSeen string `json:"firstSeen"`
	LastSeen  string `json:"lastSeen"`
	Subject   string `json:"subject"`
	first     time.Time
	last      time.Time
}

// peerContracts is what this PLEG heard of its peers' contract versions.
type peerContracts struct {
	claim contractClaim
	self  string
	log   *jsonLogger

	mu      sync.Mutex
	outside map[string]*peerOutside
}

// heard judges a message's or reply's Kubelet-Contract header (none or unreadable: nothing to judge).
func (p *peerContracts) heard(sender, svc, rawVersion, subject string) {
	if rawVersion == "" || !contractVersionRe.MatchString(rawVersion) {
		return
	}
	version, _ := strconv.Atoi(rawVersion)
	name := sender
	if name == "" {
		name = svc
	}
	if name == "" || name == p.self {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if version == p.claim.Version && len(p.outside) == 0 {
		return
	}
	now := time.Now()
	known := p.outside[name]
	ok, why, reason := judgePeer(p.claim, version)
	if ok {
		if known != nil {
			delete(p.outside, name)
			p.log.Info("peer is back within the contract skew policy", "peer", name, "peerContractVersion", version, "contractVersion", p.claim.Version, "accepts", p.claim.Accepts.String())
		}
		return
	}
	if known != nil && known.Version == version {
		known.last, known.Subject = now, subject
		return
	}
	if known == nil && len(p.outside) >= maxPeersOutside {
		p.makeRoom(now)
	}
	p.outside[name] = &peerOutside{Peer: name, Version: version, Why: why, Reason: reason, Subject: subject, first: now, last: now}
	p.log.Warn(fmt.Sprintf("peer outside the contract skew policy: %s (%s): %s; its messages are still decoded by their types, and any type version this service does not read is refused", name, why, reason),
		"peer", name, "peerContractVersion", version, "contractVersion", p.claim.Version, "accepts", p.claim.Accepts.String(), "why", why, "subject", subject, "policy", "docs/adr/0034-version-skew-policy.md")
}

func (p *peerContracts) makeRoom(now time.Time) {
	for k, o := range p.outside {
		if now.Sub(o.last) > peerForgetAfter {
			delete(p.outside, k)
		}
	}
	if len(p.outside) < maxPeersOutside {
		return
	}
	oldest := ""
	for k, o := range p.outside {
		if oldest == "" || o.last.Before(p.outside[oldest].last) {
			oldest = k
		}
	}
	delete(p.outside, oldest)
}

// peersOutsidePolicy are those heard from within peerForgetAfter, by name.
func (p *peerContracts) peersOutsidePolicy() []peerOutside {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	out := []peerOutside{}
	for k, o := range p.outside {
		if now.Sub(o.last) > peerForgetAfter {
			delete(p.outside, k)
			continue
		}
		c := *o
		c.FirstSeen, c.LastSeen = iso(o.first), iso(o.last)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Peer < out[j].Peer })
	return out
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// check is the `contractVersions` readiness check: ok always, degraded while a peer is outside the policy.
func (p *peerContracts) check() checkResult {
	peers := p.peersOutsidePolicy()
	mine := fmt.Sprintf("contract %d, accepts %s", p.claim.Version, p.claim.Accepts)
	if len(peers) == 0 {
		return checkResult{OK: true, Detail: mine}
	}
	detail := mine + "; degraded: peers outside the skew policy: "
	for i, o := range peers {
		if i > 0 {
			detail += "; "
		}
		detail += fmt.Sprintf("%s speaks %d (%s)", o.Peer, o.Version, o.Why)
	}
	return checkResult{OK: true, Degraded: true, Detail: detail}
}

// info is /info's `contract`.
func (p *peerContracts) info() map[string]any {
	return map[string]any{"version": p.claim.Version, "accepts": p.claim.Accepts, "peersOutsidePolicy": p.peersOutsidePolicy()}
}
