package runner

import (
	"dbio/internal/analysis"
	"dbio/internal/results"
)

// Ceiling is the stepping policy of a response-time study, drawn by
// internal/analysis from the steps as they are recorded.
type Ceiling = analysis.Ceiling

// Names of the run-level figures Ceiling.Conclude records.
const (
	FigureMaxUsersUnderCeiling = results.FigureMaxUsersUnderCeiling
	FigureCeiling              = results.FigureCeiling
	FigureCeilingReached       = results.FigureCeilingReached
)
