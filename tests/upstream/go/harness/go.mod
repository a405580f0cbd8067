module toolnexus.local/upstream-go-harness

go 1.22
