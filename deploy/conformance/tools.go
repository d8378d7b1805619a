//go:build tools

// Package tools pins the packages built from this module (e2e.test is
// `go test -c k8s.io/kubernetes/test/e2e`).
package tools

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/images/agnhost"
	_ "k8s.io/kubernetes/test/images/nonewprivs"
	_ "k8s.io/sample-apiserver"
)
