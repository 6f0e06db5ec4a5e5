//go:build !race

package round

// raceDetector: the tests run under the race detector (go test -race),
// which makes the engine some ten times slower.
const raceDetector = false
