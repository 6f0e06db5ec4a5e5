package table

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// machineFiles are the files of the pure state machine (Machine, its
// inputs, events and checkpoint): the Controller, the journal seam and the
// replay driver live in other files of the package.
var machineFiles = []string{"machine.go", "machine_shoe.go", "machine_types.go", "input.go", "event.go", "checkpoint.go", "crowd.go"}

// TestMachineIsPure enforces what the Machine promises: no I/O, no clock
// reads, no goroutines, channels or locks, nothing of the loop around it.
// The machine lives in package table (beside the loop that drives it) so
// this test checks its files rather than a package's imports: each file's
// imports are on an allow-list, and the code names no clock function, no
// go statement, channel or select, and none of the loop's types.
func TestMachineIsPure(t *testing.T) {
	for _, name := range machineFiles {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.Empty(t, impurities(t, name, string(src)))
	}
}

// TestMachineIsPureCatches: the check finds each kind of impurity.
func TestMachineIsPureCatches(t *testing.T) {
	for _, src := range []string{
		"package table\nimport \"os\"\nvar _ = os.Args\n",
		"package table\nimport \"time\"\nvar _ = time.Now()\n",
		"package table\nfunc f() { go f() }\n",
		"package table\nvar c chan int\n",
		"package table\nvar _ *Controller\n",
		"package table\nimport \"sync\"\nvar _ sync.Mutex\n",
	} {
		assert.NotEmpty(t, impurities(t, "x.go", src), src)
	}
}

func impurities(t *testing.T, name, src string) []string {
	t.Helper()
	const mod = "github.com/livetable/livetable/"
	allowed := map[string]bool{
		"encoding/json": true, "errors": true, "fmt": true, "hash/fnv": true, "maps": true, "math": true,
		"slices": true, "strings": true, "time": true, "strconv": true,
		mod + "table/card": true, mod + "table/round": true, mod + "table/rules": true,
		mod + "table/sidebets": true, mod + "table/strategy": true,
	}
	clockFuncs := map[string]bool{"Now": true, "Since": true, "Until": true, "After": true, "AfterFunc": true,
		"Sleep": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	loopNames := map[string]bool{"Controller": true, "Journal": true, "Entry": true, "replayInto": true}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	require.NoError(t, err, name)
	var bad []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !allowed[path] {
			bad = append(bad, name+" imports "+path+": the machine does no I/O")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		at := func() string { return fset.Position(n.Pos()).String() }
		switch v := n.(type) {
		case *ast.GoStmt:
			bad = append(bad, at()+": a go statement in the machine")
		case *ast.ChanType, *ast.SelectStmt, *ast.SendStmt:
			bad = append(bad, at()+": channels belong to the loop")
		case *ast.SelectorExpr:
			if x, ok := v.X.(*ast.Ident); ok && x.Name == "time" && clockFuncs[v.Sel.Name] {
				bad = append(bad, at()+": time."+v.Sel.Name+" reads the clock: time is an argument of Apply")
			}
		case *ast.Ident:
			if loopNames[v.Name] {
				bad = append(bad, at()+": the machine names "+v.Name+", part of the loop")
			}
		}
		return true
	})
	return bad
}
