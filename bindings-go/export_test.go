package toolnexus

// SetPumping is setPumping, for the package's external tests.
var SetPumping = setPumping
