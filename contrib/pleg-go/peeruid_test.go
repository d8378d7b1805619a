package main

import (
	"net"
	"net/netip"
	"os"
	"testing"
)

func TestUIDInTable(t *testing.T) {
	// 127.0.0.1:40000 -> 127.0.0.1:10313 owned by uid 1000, and the server's end (uid 0).
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:9C40 0100007F:2849 01 00000000:00000000 00:00000000 00000000  1000        0 1\n" +
		"   1: 0100007F:2849 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2\n"
	client := netip.MustParseAddrPort("127.0.0.1:40000")
	server := netip.MustParseAddrPort("127.0.0.1:10313")
	if uid, ok := uidInTable(table, client, server); !ok || uid != 1000 {
		t.Fatalf("got %d %v", uid, ok)
	}
	if _, ok := uidInTable(table, netip.MustParseAddrPort("127.0.0.1:40001"), server); ok {
		t.Fatal("another port is not that client")
	}
}

func TestPeerUIDOfARealLoopbackConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if uid, ok := peerUID(s.RemoteAddr(), s.LocalAddr()); !ok || uid != os.Getuid() {
		t.Fatalf("this process' own connection: got %d %v, want %d", uid, ok, os.Getuid())
	}
}
