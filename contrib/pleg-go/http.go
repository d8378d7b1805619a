package main

// pleg's HTTP port (libs/service): /healthz and /readyz (200 or 503 with
// every check), /metrics, /info (the ServiceInfo), GET and POST /mode. With
// HTTP_TOKEN_FILE every route but /healthz, /readyz and /metrics needs the
// bearer token; off loopback without one, only those three are served.

import (
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/kubelet-split/contrib/pleg-go/internal/pleg"
)

var openPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func errorBody(code, description string) map[string]any {
	return map[string]any{"error": map[string]string{"code": code, "description": description}}
}

func httpHandler(h *health, m *promMetrics, info func() map[string]any, runner *pleg.Runner, host, token string) http.Handler {
	mux := http.NewServeMux()
	reportOf := func(ready bool) (int, map[string]any) {
		h.mu.Lock()
		draining := h.draining
		h.mu.Unlock()
		checks := h.liveness
		if ready {
			checks = h.readiness
		} else {
			draining = false
		}
		ok, results, degraded := h.report(checks, draining)
		status := http.StatusOK
		if !ok {
			status = http.StatusServiceUnavailable
		}
		body := map[string]any{"ok": ok, "checks": results}
		if len(degraded) > 0 {
			body["degraded"] = degraded
		}
		return status, body
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { s, b := reportOf(false); writeJSON(w, s, b) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { s, b := reportOf(true); writeJSON(w, s, b) })
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(m.Text()))
	})
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, info()) })
	mux.HandleFunc("GET /mode", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, runner.Mode()) })
	mux.HandleFunc("POST /mode", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody("InvalidArgument", "the body must be JSON: "+err.Error()))
			return
		}
		mode, err := pleg.ParseMode(body["mode"])
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody("InvalidArgument", err.Error()))
			return
		}
		runner.SetMode(mode, "requested")
		writeJSON(w, http.StatusOK, runner.Mode())
	})
	loopback := isLoopbackHost(host)
	expected := "Bearer " + token
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !openPaths[r.URL.Path] {
			switch {
			case token != "":
				if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(expected)) != 1 {
					w.Header().Set("WWW-Authenticate", "Bearer")
					writeJSON(w, http.StatusUnauthorized, errorBody("Unauthenticated", strings.TrimPrefix(r.URL.Path, "/")+" needs Authorization: Bearer <HTTP_TOKEN_FILE>"))
					return
				}
			case !loopback:
				writeJSON(w, http.StatusForbidden, errorBody("PermissionDenied", r.URL.Path+" serves pod data or acts: off loopback it needs HTTP_TOKEN_FILE set and Authorization: Bearer <token>"))
				return
			default:
				local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
				remote, err := net.ResolveTCPAddr("tcp", r.RemoteAddr)
				uid, found := 0, false
				if local != nil && err == nil {
					uid, found = peerUID(remote, local)
				}
				if !found || (uid != 0 && uid != os.Getuid()) {
					who := "a client whose user could not be found in /proc/net/tcp"
					if found {
						who = "uid " + strconv.Itoa(uid)
					}
					writeJSON(w, http.StatusForbidden, errorBody("PermissionDenied", r.URL.Path+" serves pod data or acts: on loopback it is served to uid 0 and "+strconv.Itoa(os.Getuid())+" only, not to "+who+" (set HTTP_TOKEN_FILE to let others in with the token)"))
					return
				}
			}
		}
		mux.ServeHTTP(w, r)
	})
}
