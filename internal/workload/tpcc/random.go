package tpcc

import (
	"math/rand/v2"
	"strings"
	"unsafe"
)

// Constants for NURand (clause 2.1.6). C is a run-time constant per A; the
// value for C_LAST at run time must differ from the load-time value by an
// amount in [65, 119] other than 96 and 112 (clause 2.1.6.1).
type Constants struct {
	CLast int // C for NURand(255, 0, 999): customer last names
	CID   int // C for NURand(1023, 1, 3000): customer ids
	OLIID int // C for NURand(8191, 1, 100000): item ids
}

// NewLoadConstants draws the constants used to populate the database.
func NewLoadConstants(rng *rand.Rand) Constants {
	return Constants{CLast: rng.IntN(256), CID: rng.IntN(1024), OLIID: rng.IntN(8192)}
}

// RunConstants derives run-time constants from the load-time ones: the same C
// for ids, and a C for last names whose distance to the load value follows 2.1.6.1.
func RunConstants(load Constants, rng *rand.Rand) Constants {
	for {
		c := rng.IntN(256)
		d := c - load.CLast
		if d < 0 {
			d = -d
		}
		if d >= 65 && d <= 119 && d != 96 && d != 112 {
			return Constants{CLast: c, CID: load.CID, OLIID: load.OLIID}
		}
	}
}

// Valid reports whether run-time constants satisfy 2.1.6.1 against load-time ones.
func (c Constants) ValidRunFor(load Constants) bool {
	d := c.CLast - load.CLast
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112 && c.CID == load.CID && c.OLIID == load.OLIID
}

// rnd wraps a generator with the specification's random functions.
type rnd struct {
	*rand.Rand
	c Constants
}

func newRnd(seed1, seed2 uint64, c Constants) *rnd {
	return &rnd{Rand: rand.New(rand.NewPCG(seed1, seed2)), c: c}
}

// uniform returns an integer in [lo, hi], inclusive (clause 2.1.5).
func (r *rnd) uniform(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// nurand is the non-uniform random function of clause 2.1.6:
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func (r *rnd) nurand(a, x, y int) int {
	var c int
	switch a {
	case 255:
		c = r.c.CLast
	case 1023:
		c = r.c.CID
	case 8191:
		c = r.c.OLIID
	}
	return NURand(a, x, y, c, r.uniform(0, a), r.uniform(x, y))
}

// NURand applies the formula of clause 2.1.6 to two uniform draws.
func NURand(a, x, y, c, ra, rxy int) int {
	return (((ra | rxy) + c) % (y - x + 1)) + x
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// astring is a random a-string of length in [lo, hi] (clause 4.3.2.2).
// Loading spends most of its time here, so each 64-bit draw yields four
// characters (16 bits each, mapped onto the alphabet by multiply-shift; the
// bias is below 0.1 %).
func (r *rnd) astring(lo, hi int) string {
	return r.fill(r.uniform(lo, hi), alnum)
}

// nstring is a random numeric string of length in [lo, hi].
func (r *rnd) nstring(lo, hi int) string {
	return r.fill(r.uniform(lo, hi), digits)
}

const digits = "0123456789"

// fill draws n characters of alphabet.
func (r *rnd) fill(n int, alphabet string) string {
	b := make([]byte, n)
	size := uint64(len(alphabet))
	var x uint64
	for i := range b {
		if i%4 == 0 {
			x = r.Uint64()
		}
		b[i] = alphabet[((x&0xffff)*size)>>16]
		x >>= 16
	}
	// b is never written again, so the string can share its memory.
	return unsafe.String(unsafe.SliceData(b), n)
}

// zip is four random digits followed by "11111" (clause 4.3.2.7).
func (r *rnd) zip() string { return r.nstring(4, 4) + "11111" }

// state is two random letters.
func (r *rnd) state() string {
	return string([]byte{byte('A' + r.IntN(26)), byte('A' + r.IntN(26))})
}

// data is an a-string of [lo, hi] characters in which, for 10 % of rows,
// "ORIGINAL" is placed at a random position (clause 4.3.3.1 for I_DATA and S_DATA).
func (r *rnd) data(lo, hi int) string {
	s := r.astring(lo, hi)
	if r.IntN(10) != 0 {
		return s
	}
	pos := r.IntN(len(s) - len(original) + 1)
	return s[:pos] + original + s[pos+len(original):]
}

const original = "ORIGINAL"

// syllables build customer last names (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName concatenates the syllables indexed by the three digits of n (0..999).
func LastName(n int) string {
	var b strings.Builder
	b.WriteString(syllables[n/100])
	b.WriteString(syllables[(n/10)%10])
	b.WriteString(syllables[n%10])
	return b.String()
}

// lastNameRun is C_LAST for a customer selected by name at run time (2.5.1.2, 2.6.1.2).
func (r *rnd) lastNameRun() string { return LastName(r.nurand(255, 0, 999)) }

// customerID is a customer selected by id at run time.
func (r *rnd) customerID() int { return r.nurand(1023, 1, CustomersPerDistrict) }

// itemID is an item ordered at run time.
func (r *rnd) itemID() int { return r.nurand(8191, 1, Items) }

// permutation returns 1..n in random order (clause 4.3.3.1: O_C_ID).
func (r *rnd) permutation(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i + 1
	}
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// money returns a value in [lo, hi] with two decimals, as cents.
func (r *rnd) cents(lo, hi int) int64 { return int64(r.uniform(lo, hi)) }
