// Module versions is make verify's check that the kit's Go modules compile each
// shared dependency at one version (main.go says why and how).
module github.com/controller-kit/controller-kit/test/versions

go 1.26.0

require golang.org/x/mod v0.41.0
