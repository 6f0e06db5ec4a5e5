package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/vfs"
)

// ConsoleConfig configures the dealer and supervisor console.
type ConsoleConfig struct {
	// Addr is where it listens; loopback by default. Empty string keeps
	// the default; "off" disables the console. An address off loopback
	// needs TLS (TLSCert, TLSKey) or Insecure.
	Addr string `yaml:"addr"`
	// SupervisorsFile is the accounts file that `tablectl supervisor add`
	// writes (default data_dir/supervisors.yaml), read at start and on
	// SIGHUP: the console's logins and the keys of signed commands.
	SupervisorsFile string `yaml:"supervisors_file"`
	// TLSCert and TLSKey (PEM) make the console serve HTTPS, with Secure
	// cookies.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// SecureCookie marks cookies Secure without TLS here, for a console
	// behind a TLS proxy.
	SecureCookie bool `yaml:"secure_cookie"`
	// Insecure allows plain HTTP on an address off loopback.
	Insecure bool `yaml:"insecure"`
	// Currency is the ISO 4217 code the console shows amounts in (EUR).
	Currency string `yaml:"currency"`
}

// supervisorsPath is the accounts file of cfg.
func supervisorsPath(cfg Config) string {
	if cfg.Console.SupervisorsFile != "" {
		return cfg.Console.SupervisorsFile
	}
	return absData(cfg, supervisors.FileName)
}

// demoAccounts lets the demo's supervisor (supervisor / demo) in while the
// accounts file has none; the first account added (and a SIGHUP) ends it.
type demoAccounts struct {
	store *supervisors.Store
	hash  string
}

func (d demoAccounts) PasswordHash(name string) (string, bool, bool) {
	if d.store.Len() == 0 && name == "supervisor" {
		return d.hash, true, true
	}
	return d.store.PasswordHash(name)
}

// shoeCheck is the console's health check of the shoe link.
func shoeCheck(h *shoereader.LinkHealth) console.Check {
	up, detail, since := h.State()
	return console.Check{Name: console.CheckShoe, OK: up, Detail: detail, Since: since}
}

// healthOf builds the table's health from its parts.
func healthOf(shoe *shoereader.LinkHealth, hw *hardware, link *mqttlink.Link, jr *journal.Journal) console.HealthFunc {
	return func() console.Health {
		st := link.Stats()
		broker := console.Check{Name: console.CheckBroker, OK: st.Connected, Detail: fmt.Sprintf("outbox %d, in flight %d, published %d", st.OutboxDepth, st.InFlight, st.Published)}
		switch {
		case st.TakeoverNow:
			broker.OK = false
			broker.Detail = fmt.Sprintf("the broker keeps closing the connection right after it opens (%d times): another client with this table's client id, or an ACL that drops it; see the log; ", st.ShortConnections) + broker.Detail
		case !st.Connected:
			broker.Detail = "not connected; " + broker.Detail
		}
		jc := console.Check{Name: console.CheckJournal, OK: jr.Err() == nil, Detail: "appending"}
		if err := jr.Err(); err != nil {
			jc.Detail = err.Error()
		}
		gpio := console.Check{Name: console.CheckGPIO, OK: len(hw.lines) > 0, Detail: fmt.Sprintf("%d lines", len(hw.lines))}
		if hw.studio != nil {
			gpio.Detail += " (simulated)"
		}
		return console.Health{Checks: []console.Check{
			shoeCheck(shoe), gpio, broker, jc,
			{Name: console.CheckClock, OK: true, Detail: time.Now().UTC().Format(time.RFC3339)},
		}}
	}
}

// timedFile times each fsync of the journal for the metrics.
type timedFile struct {
	vfs.File
	observe func(time.Duration)
}

func (f timedFile) Sync() error {
	start := time.Now()
	err := f.File.Sync()
	f.observe(time.Since(start))
	return err
}

// timedFS is the operating system's file system with each file's fsync
// timed for the metrics: the journal's.
type timedFS struct {
	vfs.OS
	observe func(time.Duration)
}

func (t timedFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := t.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return timedFile{File: f, observe: t.observe}, nil
}

func consoleLog(log zerolog.Logger) zerolog.Logger { return log.With().Str("part", "console").Logger() }
