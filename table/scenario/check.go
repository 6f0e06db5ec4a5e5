package scenario

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Check compares a run's result (out, or err when the scenario was
// rejected) with a case file's expected subset and lists the differences;
// none means the case passes. `"expected": {"error": true}` wants a
// rejection, any message.
func Check(expected map[string]any, out *Output, err error) []string {
	if want, ok := expected["error"]; ok && want == true {
		if err == nil {
			return []string{"want the scenario rejected, it ran"}
		}
		return nil
	}
	if err != nil {
		return []string{fmt.Sprintf("want a result, the scenario was rejected: %v", err)}
	}
	var got map[string]any
	b, merr := json.Marshal(out)
	if merr == nil {
		merr = json.Unmarshal(b, &got)
	}
	if merr != nil {
		return []string{fmt.Sprintf("result not JSON: %v", merr)}
	}
	return subset("", expected, got)
}

// subset lists where got differs from the expected subset: every key of
// want must be in got with an equal value; lists compare element by element
// over their whole length.
func subset(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			out = append(out, subset(path+"."+k, wv, gv)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, w, got)}
		}
		var out []string
		for i := range w {
			out = append(out, subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
		return nil
	}
}
