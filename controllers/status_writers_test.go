/*
Copyright 2026 The capo-multiaz Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// conditionWriters are the calls that write a condition: Cluster API's and apimachinery's, and
// this package's helpers for them (all defined in *_status.go files).
var conditionWriters = map[string]bool{
	"conditions.Set": true, "conditions.Delete": true, "meta.SetStatusCondition": true, "meta.RemoveStatusCondition": true,
	"SetConditions": true, "setCondition": true, "reportProblem": true, "setFailure": true, "setSummary": true,
	"initConditions": true, "instanceProblem": true, "dropForeignConditions": true,
}

// statusWrites lists, in the Go source src (named file), each assignment to a status field and
// each call that writes a condition, as "file:line: what".
func statusWrites(file string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		return nil, err
	}
	var found []string
	report := func(pos token.Pos, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(pos), what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, lhs := range n.Lhs {
				if throughStatus(lhs) {
					report(n.Pos(), "assigns "+spelled(lhs))
				}
			}
		case *ast.IncDecStmt:
			if throughStatus(n.X) {
				report(n.Pos(), "changes "+spelled(n.X))
			}
		case *ast.CallExpr:
			if name := callName(n.Fun); conditionWriters[name] {
				report(n.Pos(), "calls "+name)
			}
		}
		return true
	})
	return found, nil
}

// throughStatus says whether an assignment's target is a field of a status: a selector chain
// with ".Status." in it (osc.Status.Network, m.osm.Status.Addresses[0]). A field that is itself
// called Status (a Nova server's) is not an object's status.
func throughStatus(e ast.Expr) bool {
	inner := false
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if x.Sel.Name == "Status" && inner {
				return true
			}
			inner = true
			e = x.X
		case *ast.IndexExpr:
			inner = true
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return false
		}
	}
}

// callName is how a call names its function: "setCondition", "conditions.Set", or the method
// name for any other selector ("SetConditions").
func callName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if pkg, ok := f.X.(*ast.Ident); ok && (pkg.Name == "conditions" || pkg.Name == "meta") {
			return pkg.Name + "." + f.Sel.Name
		}
		return f.Sel.Name
	}
	return ""
}

// spelled spells an expression for messages.
func spelled(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return spelled(x.X) + "." + x.Sel.Name
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return spelled(x.X) + "[...]"
	case *ast.StarExpr:
		return "*" + spelled(x.X)
	case *ast.ParenExpr:
		return spelled(x.X)
	}
	return "?"
}

// TestOnlyStatusFilesWriteStatus keeps status computed in one place per kind: outside the
// *_status.go files, no code of the controllers assigns a status field or writes a condition.
// The phases return what they found; updateStatus writes.
func TestOnlyStatusFilesWriteStatus(t *testing.T) {
	g := NewWithT(t)
	files, err := filepath.Glob("*.go")
	g.Expect(err).NotTo(HaveOccurred())
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") || strings.HasSuffix(file, "_status.go") {
			continue
		}
		src, err := os.ReadFile(file)
		g.Expect(err).NotTo(HaveOccurred())
		writes, err := statusWrites(file, src)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(writes).To(BeEmpty(), "status is written only by the *_status.go files")
		checked++
	}
	g.Expect(checked).To(BeNumerically(">=", 10), "the controllers' files were read")
}

// The check finds what it looks for: a phase that writes a status field, and one that sets a
// condition, in each of the forms the controllers could use.
func TestStatusWritesAreFound(t *testing.T) {
	g := NewWithT(t)
	src := `package controllers
func phase(c *clusterReconcile, m *machineReconcile) {
	c.osc.Status.Router = nil
	m.osm.Status.Addresses[0].Address = "x"
	c.osc.Status.APIServerLoadBalancers, x = nil, 1
	(*m.osm).Status.InstanceID = nil
	c.osc.Status.Conditions = nil
	setCondition(c.osc, "A", "True", "R", "")
	conditions.Set(c.osc, metav1.Condition{})
	c.osc.SetConditions(nil)
	reportProblem(nil, c.osc, "A", "R", "")
	c.osc.Spec.ControlPlaneEndpoint = nil
	server.Status = "BUILD"
	status := c.osc.Status
	_ = status
}`
	writes, err := statusWrites("phase.go", []byte(src))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writes).To(HaveLen(9), "%v", writes)
	g.Expect(writes[0]).To(Equal("phase.go:3:2: assigns c.osc.Status.Router"))
	g.Expect(writes).To(ContainElement("phase.go:9:2: calls conditions.Set"))
	g.Expect(writes).NotTo(ContainElement(ContainSubstring("server.Status")), "a Nova server's status is no object's")
}
