package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kubelet-split/contrib/pleg-go/internal/pleg"
)

type nopLog struct{}

func (nopLog) Info(string, ...any) {}
func (nopLog) Warn(string, ...any) {}

func testHandler(host, token string) http.Handler {
	h := &health{
		readiness: []namedCheck{{name: "nats", fn: func() (bool, string) { return true, "nats://x" }}, {name: "pleg", fn: func() (bool, string) { return true, "mode generic" }}},
		liveness:  []namedCheck{{name: "pleg", fn: func() (bool, string) { return false, "pleg was last seen active 200s ago; threshold is 180s" }}},
	}
	g := pleg.NewGeneric(pleg.Deps{Clock: systemClock{}, Logger: nopLog{}}, pleg.Options{InspectTimeout: time.Second, RelistThreshold: time.Minute})
	runner := pleg.NewRunner(pleg.RunnerDeps{Pleg: g, Clock: systemClock{}, Logger: nopLog{}}, pleg.RunnerOptions{RelistPeriod: time.Second, EventedRelistPeriod: time.Minute, EventedSilence: time.Minute}, "generic")
	m := newPromMetrics("pleg", "node-a")
	m.healthy = func() bool { return false }
	return httpHandler(h, m, func() map[string]any { return map[string]any{"service": "pleg"} }, runner, host, token)
}

func do(t *testing.T, h http.Handler, method, path, body, auth string) (int, string) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

func TestHealthAndReadiness(t *testing.T) {
	h := testHandler("127.0.0.1", "secret")
	code, body := do(t, h, "GET", "/healthz", "", "")
	var report struct {
		OK     bool                   `json:"ok"`
		Checks map[string]checkResult `json:"checks"`
	}
	_ = json.Unmarshal([]byte(body), &report)
	if code != 503 || report.OK || report.Checks["pleg"].Detail == "" {
		t.Fatalf("an unhealthy PLEG: 503 with the reason: %d %s", code, body)
	}
	if code, body := do(t, h, "GET", "/readyz", "", ""); code != 200 || !strings.Contains(body, `"nats":{"ok":true,"detail":"nats://x"}`) {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := do(t, h, "GET", "/metrics", "", ""); code != 200 || !strings.Contains(body, `kubelet_split_pleg_healthy{node="node-a",service="pleg"} 0`) || !strings.Contains(body, "kubelet_pleg_relist_duration_seconds_bucket{le=\"0.005\",") {
		t.Fatalf("%d %s", code, body)
	}
}

func TestAccess(t *testing.T) {
	h := testHandler("127.0.0.1", "secret")
	if code, _ := do(t, h, "GET", "/info", "", ""); code != 401 {
		t.Fatalf("with HTTP_TOKEN_FILE, /info needs the token: %d", code)
	}
	if code, _ := do(t, h, "GET", "/info", "", "Bearer secret"); code != 200 {
		t.Fatalf("the token lets in: %d", code)
	}
	off := testHandler("10.0.0.1", "")
	if code, body := do(t, off, "GET", "/mode", "", ""); code != 403 || !strings.Contains(body, "off loopback it needs HTTP_TOKEN_FILE") {
		t.Fatalf("off loopback without a token: %d %s", code, body)
	}
	if code, _ := do(t, off, "GET", "/readyz", "", ""); code != 200 {
		t.Fatal("/readyz is always served")
	}
}

func TestModeCommand(t *testing.T) {
	h := testHandler("127.0.0.1", "secret")
	code, body := do(t, h, "POST", "/mode", `{"mode":"sideways"}`, "Bearer secret")
	if code != 400 || body != `{"error":{"code":"InvalidArgument","description":"mode must be \"generic\" or \"evented\", got \"sideways\""}}`+"\n" {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := do(t, h, "POST", "/mode", `not json`, "Bearer secret"); code != 400 || !strings.Contains(body, "the body must be JSON") {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := do(t, h, "GET", "/mode", "", "Bearer secret"); code != 200 || body != `{"desired":"generic","effective":"generic"}`+"\n" {
		t.Fatalf("%d %s", code, body)
	}
}
