package toycloud

import (
	"fmt"
	"net/netip"
)

// TestNet1 is 192.0.2.0/24, the documentation block of RFC 5737 (TEST-NET-1). Every
// pool of the toy cloud lies inside it: its addresses are written to Services'
// status only, nothing listens on them, and no real network routes them.
var TestNet1 = netip.MustParsePrefix("192.0.2.0/24")

// DefaultPool is the pool when the cloud config names none: 192.0.2.240/28, the
// 16 addresses 192.0.2.240 to 192.0.2.255.
const DefaultPool = "192.0.2.240/28"

// Pool is the toy cloud's range of load-balancer addresses: every address of one
// IPv4 prefix inside TestNet1 (the network and broadcast addresses too: nothing
// routes them, so nothing reserves them). The zero Pool has no address.
type Pool struct {
	prefix netip.Prefix
}

// ParsePool parses a pool written as a prefix, such as "192.0.2.240/28". The error
// names the value and says what is wrong: not a prefix, not IPv4, host bits set,
// or not inside TestNet1.
func ParsePool(s string) (Pool, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return Pool{}, fmt.Errorf("%q is not a prefix such as %s: %w", s, DefaultPool, err)
	}
	if p != p.Masked() {
		return Pool{}, fmt.Errorf("%q has host bits set; did you mean %s?", s, p.Masked())
	}
	if !p.Addr().Is4() || p.Bits() < TestNet1.Bits() || !TestNet1.Contains(p.Addr()) {
		return Pool{}, fmt.Errorf("%q is not inside %s (TEST-NET-1, the only addresses the toy cloud hands out), for example %s", s, TestNet1, DefaultPool)
	}
	return Pool{prefix: p}, nil
}

// String returns the pool as its prefix, such as "192.0.2.240/28"; error messages
// name the pool so.
func (p Pool) String() string { return p.prefix.String() }

// Size returns how many addresses the pool holds (16 for a /28).
func (p Pool) Size() int {
	if !p.prefix.IsValid() {
		return 0
	}
	return 1 << (32 - p.prefix.Bits())
}

// Contains reports whether addr is one of the pool's addresses.
func (p Pool) Contains(addr netip.Addr) bool {
	return p.prefix.IsValid() && p.prefix.Contains(addr)
}

// First returns the lowest address of the pool that free accepts, and false when
// it accepts none: the pool is exhausted.
func (p Pool) First(free func(netip.Addr) bool) (netip.Addr, bool) {
	if !p.prefix.IsValid() {
		return netip.Addr{}, false
	}
	for a := p.prefix.Addr(); p.prefix.Contains(a); a = a.Next() {
		if free(a) {
			return a, true
		}
	}
	return netip.Addr{}, false
}
