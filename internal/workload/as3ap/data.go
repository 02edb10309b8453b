package as3ap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"dbio/internal/workload/sqlclient"
)

// The four AS3AP relations, each with the same ten columns and Rows rows.
var relations = []string{"uniques", "hundred", "tenpct", "updates"}

// column is one of the ten AS3AP columns; typ is generic, mapped per engine.
type column struct{ name, typ string }

var columns = []column{
	{"col_key", "int"}, {"col_int", "int"}, {"col_signed", "int"}, {"col_float", "float"}, {"col_double", "double"},
	{"col_decim", "decim"}, {"col_date", "date"}, {"col_code", "code"}, {"col_name", "name"}, {"col_address", "address"},
}

// indexes beyond each relation's primary key on col_key: every relation is
// searchable by code, and updates carries indexes on the columns its updates
// touch or search, so that updating it maintains indexes as in AS3AP.
var indexes = []struct{ name, table, column string }{
	{"uniques_code", "uniques", "col_code"},
	{"hundred_code", "hundred", "col_code"},
	{"tenpct_code", "tenpct", "col_code"},
	{"updates_code", "updates", "col_code"},
	{"updates_int", "updates", "col_int"},
	{"updates_signed", "updates", "col_signed"},
}

func createSQL(d *sqlclient.Dialect, table string) string {
	types := sqlFor(d).types
	var b strings.Builder
	for _, c := range columns {
		b.WriteString(c.name + " " + types[c.typ] + " NOT NULL, ")
	}
	b.WriteString("PRIMARY KEY (col_key)")
	return d.CreateTable(table, b.String())
}

// Landmark values AS3AP's queries look for.
const (
	siliconValley = "SILICON VALLEY"       // one address in uniques and in hundred
	asapName      = "THE+ASAP+BENCHMARKS+" // the name of every tenth row of tenpct
)

// The value ranges of AS3AP's columns.
const (
	keySpan    = 1_000_000_000 // sparse keys spread over 0..10⁹
	signedLow  = -500_000_000  // signed values over -5·10⁸..5·10⁸
	doubleSpan = 1e9           // double and decim over -10⁹..10⁹
)

// firstDate and dateDays bound col_date: 1900-01-01 to 2000-12-31.
var (
	firstDate = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	dateDays  = int(time.Date(2000, 12, 31, 0, 0, 0, 0, time.UTC).Sub(firstDate).Hours()/24) + 1
)

// generator makes the rows of the four relations. Row i (1-based) of a
// relation is a function of the seed, the relation and i, and the unique
// columns are unique by construction:
//
//   - key is dense (1..Rows) in hundred and updates, sparse (i times
//     10⁹/Rows, spread over 0..10⁹) in uniques and tenpct;
//   - int is unique everywhere, sparse and in another order than key
//     (a permutation of the rows) except in updates, where it equals key;
//   - signed is unique and sparse over ±5·10⁸ in uniques and updates, takes
//     100 values in hundred and Rows/10 values in tenpct;
//   - float follows a Zipf distribution over 100 values in uniques and 10 in
//     updates; double is normal over ±10⁹ and decim uniform over ±10⁹ with
//     two decimals; hundred takes 100 values of each, tenpct Rows/10;
//   - date is uniform over 1900-01-01..2000-12-31;
//   - code (10 characters) and name (20) are unique, except name in hundred
//     (100 values) and every tenth name of tenpct, THE+ASAP+BENCHMARKS+;
//   - address is up to 80 characters, 20 on average, with one SILICON
//     VALLEY in uniques and in hundred.
type generator struct {
	rows    int
	seed    uint64
	spread  int64
	perm    [2]permutation
	zipf100 zipfTable
	zipf10  zipfTable
	hundred [100]shared
}

// shared are the values of a column group that repeats across rows.
type shared struct {
	float   float32
	double  float64
	decim   string
	name    string
	address string
}

func newGenerator(rows int, seed uint64) *generator {
	g := &generator{rows: rows, seed: seed, spread: keySpread(rows)}
	g.perm[0] = newPermutation(rows, 0x9e3779b97f4a7c15^seed)
	g.perm[1] = newPermutation(rows, 0xc2b2ae3d27d4eb4f^seed)
	r := rand.New(rand.NewPCG(seed, 0xA5A5))
	g.zipf100 = newZipfTable(r, 100)
	g.zipf10 = newZipfTable(r, 10)
	for k := range g.hundred {
		g.hundred[k] = shared{
			float: float32(signedLow + r.Int64N(keySpan)), double: normal(r), decim: uniformDecim(r),
			name: fmt.Sprintf("HUNDRED%02d", k) + letters(r, 11), address: address(r),
		}
	}
	g.hundred[r.IntN(100)].address = siliconValley
	return g
}

// keySpread is the distance between consecutive sparse keys.
func keySpread(rows int) int64 { return max(1, keySpan/int64(rows)) }

// rng is the random stream of one relation.
func (g *generator) rng(table int) *rand.Rand { return rand.New(rand.NewPCG(g.seed, uint64(table)+1)) }

func (g *generator) sparse(i int) int64       { return int64(i) * g.spread }
func (g *generator) signedSparse(i int) int64 { return signedLow + int64(i)*g.spread }

// code is unique: three random letters, then the row's place in a
// permutation in base 36, so codes do not follow the keys' order.
func (g *generator) code(r *rand.Rand, i int) string {
	return letters(r, 3) + base36(g.perm[1].at(i)-1, 7)
}

// uniqueName extends the unique code to 20 characters.
func uniqueName(r *rand.Rand, code string) string { return code + strings.ToLower(letters(r, 10)) }

// row returns row i of relation table (an index into relations), in the
// order of columns.
func (g *generator) row(table int, r *rand.Rand, i int) []any {
	code := g.code(r, i)
	date := firstDate.AddDate(0, 0, r.IntN(dateDays)).Format(time.DateOnly)
	switch relations[table] {
	case "uniques":
		addr := address(r)
		if i == g.rows/2 {
			addr = siliconValley
		}
		return []any{g.sparse(i), g.sparse(g.perm[0].at(i)), g.signedSparse(g.perm[1].at(i)), g.zipf100.draw(r),
			normal(r), uniformDecim(r), date, code, uniqueName(r, code), addr}
	case "hundred":
		h := g.hundred[i%100]
		return []any{int64(i), g.sparse(g.perm[0].at(i)), int64(100 + i%100), h.float, h.double, h.decim, date, code, h.name, h.address}
	case "tenpct":
		groups := max(1, g.rows/10)
		b := g.perm[1].at(i) % groups
		v := rand.New(rand.NewPCG(g.seed^0x7e4, uint64(b)))
		double := normal(v)
		name := asapName
		if i%10 != 0 {
			name = uniqueName(r, code)
		}
		return []any{g.sparse(i), g.sparse(g.perm[0].at(i)), signedLow + int64(b)*(keySpan/int64(groups)), float32(double / 2),
			double, uniformDecim(v), date, code, name, address(r)}
	default: // updates
		return []any{int64(i), int64(i), g.signedSparse(i), g.zipf10.draw(r), normal(r), uniformDecim(r), date, code,
			uniqueName(r, code), address(r)}
	}
}

// permutation maps 1..n onto itself: i -> ((i-1)·a + c) mod n + 1 with a
// prime to n, a bijection that needs no memory.
type permutation struct{ n, a, c int64 }

func newPermutation(n int, salt uint64) permutation {
	p := permutation{n: int64(n), a: int64(salt%uint64(n)) | 1, c: int64((salt >> 32) % uint64(n))}
	for gcd(p.a, p.n) != 1 {
		p.a = (p.a + 2) % p.n
		if p.a == 0 {
			p.a = 1
		}
	}
	return p
}

func (p permutation) at(i int) int { return int((int64(i-1)*p.a+p.c)%p.n) + 1 }

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// zipfTable draws one of a few values, the k-th most often with weight 1/k.
type zipfTable struct {
	values []float32
	cum    []float64
}

func newZipfTable(r *rand.Rand, n int) zipfTable {
	z := zipfTable{values: make([]float32, n), cum: make([]float64, n)}
	var total float64
	for k := range n {
		z.values[k] = float32(signedLow + r.Int64N(keySpan))
		total += 1 / float64(k+1)
		z.cum[k] = total
	}
	for k := range z.cum {
		z.cum[k] /= total
	}
	return z
}

func (z zipfTable) draw(r *rand.Rand) float32 {
	u := r.Float64()
	for k, c := range z.cum {
		if u < c {
			return z.values[k]
		}
	}
	return z.values[len(z.values)-1]
}

// normal is centred on 0 with three standard deviations to ±10⁹, clamped there.
func normal(r *rand.Rand) float64 {
	v := math.Round(r.NormFloat64()*doubleSpan/3*100) / 100
	return math.Max(-doubleSpan, math.Min(doubleSpan, v))
}

// uniformDecim is a decimal over ±10⁹ with two decimals, as text so that
// every engine stores it exactly.
func uniformDecim(r *rand.Rand) string {
	cents := r.Int64N(2*doubleSpan*100+1) - doubleSpan*100
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

func letters(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// address is 2 to 38 characters (20 on average) of words.
func address(r *rand.Rand) string {
	n := 2 + r.IntN(37)
	b := make([]byte, n)
	for i := range b {
		if i > 0 && i < n-1 && r.IntN(6) == 0 {
			b[i] = ' '
		} else {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return string(b)
}

func base36(v, width int) string {
	s := strings.ToUpper(strconv.FormatInt(int64(v), 36))
	return strings.Repeat("0", max(0, width-len(s))) + s
}
