package main

// Structured logs in pino's shape (libs/observability createLogger): one JSON
// object a line on stdout, with level as a label, an ISO time, and the
// service, node, instance and pid of every line.

import (
	"encoding/json"
	"os"
	"sync"
	"time"
)

var levelRank = map[string]int{"debug": 20, "info": 30, "warn": 40, "error": 50, "fatal": 60}

type jsonLogger struct {
	mu    *sync.Mutex
	min   int
	base  map[string]any
	write func([]byte)
}

func newLogger(level string, base map[string]any) *jsonLogger {
	return &jsonLogger{mu: &sync.Mutex{}, min: levelRank[level], base: base, write: func(b []byte) { _, _ = os.Stdout.Write(b) }}
}

func (l *jsonLogger) child(kv ...any) *jsonLogger {
	base := map[string]any{}
	for k, v := range l.base {
		base[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		base[kv[i].(string)] = kv[i+1]
	}
	return &jsonLogger{mu: l.mu, min: l.min, base: base, write: l.write}
}

func (l *jsonLogger) log(level, msg string, kv []any) {
	if levelRank[level] < l.min {
		return
	}
	rec := map[string]any{}
	for k, v := range l.base {
		rec[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok {
			rec[k] = kv[i+1]
		}
	}
	rec["level"] = level
	rec["time"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	rec["msg"] = msg
	b, err := json.Marshal(rec)
	if err != nil {
		b = []byte(`{"level":"error","msg":"unloggable record"}`)
	}
	l.mu.Lock()
	l.write(append(b, '\n'))
	l.mu.Unlock()
}

func (l *jsonLogger) Debug(msg string, kv ...any) { l.log("debug", msg, kv) }
func (l *jsonLogger) Info(msg string, kv ...any)  { l.log("info", msg, kv) }
func (l *jsonLogger) Warn(msg string, kv ...any)  { l.log("warn", msg, kv) }
func (l *jsonLogger) Error(msg string, kv ...any) { l.log("error", msg, kv) }
func (l *jsonLogger) Fatal(msg string, kv ...any) { l.log("fatal", msg, kv) }
