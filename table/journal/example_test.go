package journal_test

import (
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/journal"
)

// The controller appends each input before applying it, and replays the
// journal on start.
func Example() {
	dir, err := os.MkdirTemp("", "journal-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	j, rep, err := journal.Open(journal.Options{Dir: dir}, zerolog.Nop())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("torn tail cut:", rep.Truncated())
	now := time.Date(2026, 11, 21, 20, 15, 3, 0, time.UTC) // from the controller's clock
	for _, c := range []string{"As", "Td", "9c"} {
		seq, err := j.Append(journal.Record{
			Time: now, Round: "#20:15:03", Shoe: "S-00042", Kind: "card",
			Data: fmt.Appendf(nil, `{"kind":"card","data":{"card":%q}}`, c),
		})
		if err != nil {
			fmt.Println(err) // ErrDiskFull: raise the alarm, stop new rounds
			return
		}
		fmt.Println("durable:", seq)
	}
	_ = j.Replay(2, func(r journal.Record) error {
		fmt.Println("replay:", r.Seq, r.Round, string(r.Data))
		return nil
	})
	for _, r := range j.Rounds(10) {
		fmt.Println("round:", r.Code, r.Records, "records")
	}
	if err := j.Close(); err != nil {
		fmt.Println(err)
	}
	vr, err := journal.Verify(dir)
	fmt.Println("verify:", vr.Records, "records", err)
	// Output:
	// torn tail cut: false
	// durable: 1
	// durable: 2
	// durable: 3
	// replay: 2 #20:15:03 {"kind":"card","data":{"card":"Td"}}
	// replay: 3 #20:15:03 {"kind":"card","data":{"card":"9c"}}
	// round: #20:15:03 3 records
	// verify: 3 records <nil>
}
