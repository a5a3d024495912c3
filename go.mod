module github.com/bobbin-yarn/bobbin

go 1.26.8

require (
	github.com/beevik/etree v1.8.1 // indirect
	github.com/google/btree v1.1.3 // indirect
	github.com/rcrowley/go-metrics v0.0.0-20250401214520-65e299d6c5c9 // indirect
	github.com/sirupsen/logrus v1.10.2 // indirect
	golang.org/x/sys v0.13.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

tool google.golang.org/protobuf/cmd/protoc-gen-go
