package ctrlproc

import (
	"net"
	"strconv"
	"testing"
)

// The ports the harness picks for a controller lie below the kernel's
// ephemeral range, which every outgoing connection draws from: between
// picking a port and the controller binding it, no client can take it.
func TestFreePortIsBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 50 {
		addr, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		if port < portFloor || port >= low {
			t.Fatalf("port %d, want one in [%d, %d)", port, portFloor, low)
		}
	}
}

// PortTaken names only the process's own addresses: a controller that
// listens on a port of its own choosing which is taken fails as it is.
func TestPortTakenIsAboutTheHarnesssPortsOnly(t *testing.T) {
	p := &Process{MetricsAddr: "127.0.0.1:23456", ProbeAddr: "127.0.0.1:23457"}
	if !p.PortTaken([]string{`ERROR setup problem running manager {"error": "listen tcp 127.0.0.1:23457: bind: address already in use"}`}) {
		t.Error("a taken probe port is not seen")
	}
	if p.PortTaken([]string{`ERROR setup problem running manager {"error": "listen tcp :8080: bind: address already in use"}`}) {
		t.Error("a port the controller chose itself counts as the harness's")
	}
}
