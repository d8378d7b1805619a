package main

// Who is on the other end of a loopback TCP connection (libs/service
// peer-uid.ts): the uid owning the client's socket, from /proc/net/tcp and
// tcp6 (the entry whose local end is the request's remote end and whose
// remote end is our local end). On loopback without HTTP_TOKEN_FILE, the
// routes that serve data or act are served to root and this process' uid only.

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// procAddr is an address as /proc/net/tcp{,6} prints it (32-bit words in host order).
func procAddr(hexAddr string) (netip.Addr, bool) {
	if len(hexAddr) != 8 && len(hexAddr) != 32 {
		return netip.Addr{}, false
	}
	raw := make([]byte, len(hexAddr)/2)
	for i := 0; i < len(hexAddr)/8; i++ {
		w, err := strconv.ParseUint(hexAddr[i*8:i*8+8], 16, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		binary.LittleEndian.PutUint32(raw[i*4:], uint32(w)) // amd64 and arm64: host order is little-endian
	}
	a, ok := netip.AddrFromSlice(raw)
	return a.Unmap(), ok
}

func endpoint(s string) (netip.Addr, uint16, bool) {
	la, lp, ok := strings.Cut(s, ":")
	if !ok {
		return netip.Addr{}, 0, false
	}
	a, ok := procAddr(la)
	p, err := strconv.ParseUint(lp, 16, 16)
	return a, uint16(p), ok && err == nil
}

// uidInTable is the uid of the entry local -> remote in a /proc/net/tcp table's text.
func uidInTable(table string, local, remote netip.AddrPort) (int, bool) {
	lines := strings.Split(table, "\n")
	for _, line := range lines[min(1, len(lines)):] {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		la, lp, ok1 := endpoint(f[1])
		ra, rp, ok2 := endpoint(f[2])
		if !ok1 || !ok2 || lp != local.Port() || rp != remote.Port() || la != local.Addr().Unmap() || ra != remote.Addr().Unmap() {
			continue
		}
		uid, err := strconv.Atoi(f[7])
		return uid, err == nil
	}
	return 0, false
}

// peerUID is the uid owning the client's end of a connection to this server.
func peerUID(client, server net.Addr) (int, bool) {
	c, err1 := netip.ParseAddrPort(client.String())
	s, err2 := netip.ParseAddrPort(server.String())
	if err1 != nil || err2 != nil {
		return 0, false
	}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if uid, ok := uidInTable(string(b), c, s); ok {
			return uid, true
		}
	}
	return 0, false
}
