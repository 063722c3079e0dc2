module gmpcourse/benchmarks/go

go 1.19
