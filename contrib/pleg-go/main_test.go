package main

import "testing"

func TestInboxPrefix(t *testing.T) {
	for user, want := range map[string]string{"pleg": "_INBOX_pleg", "pleg@node-a": "_INBOX_pleg@node-a", "admin": "_INBOX", "someone": "_INBOX_pleg", "admin@x": "_INBOX_pleg"} {
		if got := inboxPrefix(user); got != want {
			t.Errorf("%s: got %s, want %s", user, got, want)
		}
	}
}
