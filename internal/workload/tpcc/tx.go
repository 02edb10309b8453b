package tpcc

import (
	"errors"
	"sort"
	"time"
)

// Transaction types, in the order of TxTypes.
const (
	TxNewOrder = iota
	TxPayment
	TxOrderStatus
	TxDelivery
	TxStockLevel
	numTxTypes
)

var txNames = [numTxTypes]string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// errRollback is the intended rollback of clause 2.4.1.4: 1 % of New-Orders
// name an unused item and roll back. It is an outcome, not an error.
var errRollback = errors.New("tpcc: new-order rolled back on an unused item")

// errNoCustomer means a by-name look-up found no customer, which the
// population rules make impossible; it indicates a damaged database.
var errNoCustomer = errors.New("tpcc: no customer with that last name")

// orderLine is one item of a New-Order input (2.4.1.5).
type orderLine struct {
	itemID     int
	supplyWID  int
	quantity   int
	remote     bool
	amount     float64 // filled in by the transaction
	brandGenOK bool    // "B" when both item and stock data say ORIGINAL
}

// newOrderIn is the input of clause 2.4.1.
type newOrderIn struct {
	wID, dID, cID int
	lines         []orderLine
	allLocal      bool
	entryD        time.Time
	// outputs
	oID   int
	total float64
}

// customerSel selects a customer by id or, 60 % of the time, by last name (2.5.1.2, 2.6.1.2).
type customerSel struct {
	byName bool
	cID    int
	last   string
}

// paymentIn is the input of clause 2.5.1.
type paymentIn struct {
	wID, dID     int
	cWID, cDID   int
	customer     customerSel
	amount       float64
	date         time.Time
	resolvedCID  int // output: the customer paid
	badCreditHit bool
}

// orderStatusIn is the input of clause 2.6.1.
type orderStatusIn struct {
	wID, dID int
	customer customerSel
	// outputs
	oID   int
	lines int
}

// deliveryIn is the input of clause 2.7.1.
type deliveryIn struct {
	wID       int
	carrierID int
	date      time.Time
	// delivered counts districts that had an order to deliver; skipped, those that had none (2.7.4.2).
	delivered, skipped int
}

// stockLevelIn is the input of clause 2.8.1.
type stockLevelIn struct {
	wID, dID  int
	threshold int
	lowStock  int // output
}

// sortForLocking puts a New-Order's lines in (supply warehouse, item) order
// so that concurrent New-Orders lock stock rows in one order and cannot
// deadlock; the unused item of a rolled-back order has the largest id and
// stays last (2.4.2.3), so the rollback still comes after the other lines' work.
func sortForLocking(lines []orderLine) {
	sort.Slice(lines, func(i, j int) bool {
		a, b := lines[i], lines[j]
		if a.itemID > Items || b.itemID > Items {
			return b.itemID > Items && a.itemID <= Items
		}
		if a.supplyWID != b.supplyWID {
			return a.supplyWID < b.supplyWID
		}
		return a.itemID < b.itemID
	})
}
