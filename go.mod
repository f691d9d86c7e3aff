module github.com/tensorcast-go/tensorcast

go 1.26.0

require (
	github.com/sbinet/npyio v0.9.0
	github.com/stretchr/testify v1.12.1
	github.com/x448/float16 v0.8.4
	golang.org/x/sys v0.49.0
	gonum.org/v1/gonum v0.14.0
)

require (
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.14.0 // indirect
)
