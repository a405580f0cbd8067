module benchpeers

go 1.22

require github.com/toolnexus/toolnexus/bindings-go v0.0.0

replace github.com/toolnexus/toolnexus/bindings-go => ../../../../bindings-go
