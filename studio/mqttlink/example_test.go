package mqttlink_test

import (
	"errors"
	"fmt"

	"github.com/livetable/livetable/studio/mqttlink"
)

func ExampleTopicsFor() {
	t := mqttlink.TopicsFor("studio1", "t1")
	fmt.Println(t.Events)
	fmt.Println(t.Commands)
	// Output:
	// livetable/studio1/t1/events
	// livetable/studio1/t1/commands/#
}

func ExampleDecodeCommand() {
	cmd, err := mqttlink.DecodeCommand([]byte(`{"schema":1,"id":"c-17","type":"decision","seat":3,"action":"double"}`))
	fmt.Printf("%s %s %+v %v\n", cmd.ID, cmd.Type, cmd.Input, err)

	_, err = mqttlink.DecodeCommand([]byte(`{"schema":1,"id":"c-18","type":"decision","seat":3}`))
	var ce *mqttlink.CommandError
	if errors.As(err, &ce) {
		fmt.Printf("%s rejected: %s (missing field: %v)\n", ce.ID, ce.Reason, errors.Is(err, mqttlink.ErrMissingField))
	}
	// Output:
	// c-17 decision {Seat:3 Player: Action:double ID:c-17 Seen:0} <nil>
	// c-18 rejected: missing action (missing field: true)
}
