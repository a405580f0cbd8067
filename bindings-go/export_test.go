package toolnexus

// SetPumping is setPumping, for the package's external tests.
var SetPumping = setPumping

// Helped is how many tool calls driving threads ran for goroutines that had not begun them.
func Helped() int64 { return helped.Load() }
