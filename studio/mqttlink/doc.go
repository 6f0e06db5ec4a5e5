// Package mqttlink is the table's link to the studio over MQTT: it
// publishes every table event to the streaming backend without losing,
// reordering or (from the subscriber's point of view, after dropping
// duplicate sequence numbers) duplicating any, and it takes players' and
// supervisors' commands back in.
//
// # Topics
//
// Everything lives under livetable/{studio}/{table}/ (see TopicsFor):
//
//   - status: retained {"schema":2,"status":"online"} after each
//     connection, "offline" as the MQTT Last Will and on a clean stop;
//   - state: retained snapshot, the events whose Body.Kind() is "state"
//     (they take no number: envelope seq 0, the body names the last event);
//   - events: every other event, in Seq order, in its wire form
//     (wire.Encode, the one encoding shared with the console);
//   - commands/...: commands, JSON with schema, id and type (DecodeCommand),
//     resend and shuffler_reset included (the link answers them itself:
//     resend.go, command_shuffler.go);
//   - replies: {"schema":2,"id":...,"accepted":...,"reason":...} per command.
//
// docs/asyncapi.yaml is the contract; a test checks real messages against it.
//
// # Delivery
//
// paho alone is not enough: messages published before the first connection
// are lost with ConnectRetry off, its store may resend out of order after a
// reconnect, and it forgets everything on a restart. So Run writes every
// event to its own outbox under Options.OutboxDir (group commit; the fsync
// runs while the batch's first message is on its way, see outbox.go), and
// a single publisher sends the outbox from its head, in order, up to
// Options.MaxInflight messages unacknowledged, and marks each record as
// the broker's QoS 1 acknowledgements come (in order, as MQTT sends them).
// After a reconnect it sends nothing new until the broker has acknowledged
// what paho resends (paho marks the connection up before it resends; the
// store, copyStore, tells the publisher when that is over). After a
// restart it starts again from the first unacknowledged event, so a
// subscriber may see an event twice but never sees a topic out of order;
// it drops duplicates by seq. Events whose Seq the outbox already has (a
// controller replaying its journal) are not published again, and never
// dropped silently: a repeat is counted (Stats.Duplicates) and logged, the
// same seq with other content is logged as an error (Stats.Conflicts).
// OutboxLastSeq tells the controller, before it replays, where the outbox
// stands, and tabled refuses to start on a journal behind it
// (table/continuity). Events a broker
// loses after acknowledging them (a crash before it saved them) are
// recovered by the backend's resend command (resend.go), answered from
// Options.History.
//
// # Commands
//
// Commands are decoded and validated here, authorised (supervisor commands
// are signed with the supervisor's Ed25519 key, checked against
// Options.Supervisors within a replay window: signed.go) and handed to a Submitter (the table controller). Each id gets one
// reply, recorded in a persisted ledger before it is published; a repeated
// id is answered from the ledger and not applied again. The broker message
// is acknowledged only after the reply, so a crash redelivers it. A
// controller that does not answer within Options.SubmitTimeout gets a
// "retry" reply that is not remembered, so a retry asks it again (the
// controller itself answers a repeated id with its first verdict).
//
// # Brokers
//
// embedbroker.Start (studio/mqttlink/embedbroker) runs mochi-mqtt on loopback for development and
// single-box use; production points BrokerURL at mosquitto or a cluster
// (docs/deploy.md), with TLS and credentials from Options.
package mqttlink
