module github.com/toolnexus/toolnexus/bindings-go

go 1.22
