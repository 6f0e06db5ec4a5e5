package main

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/text/currency"
	"gopkg.in/yaml.v3"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/shuffler/pinmap"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// Config is tabled's configuration file (YAML). Every field has a default;
// flags override the file. See tabled.example.yaml for a documented example.
type Config struct {
	Studio  string `yaml:"studio"`
	Table   string `yaml:"table"`
	Game    string `yaml:"game"`
	DataDir string `yaml:"data_dir"`
	// LogFormat is "json" (default) or "console".
	LogFormat string `yaml:"log_format"`
	LogLevel  string `yaml:"log_level"`
	// MemoryLimit is the Go runtime's soft memory limit: past it the
	// garbage collector works harder instead of letting the heap grow (a
	// command flood leaves garbage behind faster than the default pacing
	// collects it). 0 leaves the runtime's default; the GOMEMLIMIT
	// environment variable wins over it.
	MemoryLimit ByteSize `yaml:"memory_limit"`

	Timing  TimingConfig  `yaml:"timing"`
	Journal JournalConfig `yaml:"journal"`
	Broker  BrokerConfig  `yaml:"broker"`
	Shoe    ShoeConfig    `yaml:"shoe"`
	GPIO    GPIOConfig    `yaml:"gpio"`
	Console ConsoleConfig `yaml:"console"`
	Demo    DemoConfig    `yaml:"demo"`

	// configFile and configDataDir are the --config file and the
	// data_dir it names ("" when it names none), the directory `tablectl
	// --config FILE` addresses; --data-dir may override it (see
	// checkDataDir).
	configFile, configDataDir string
}

// TimingConfig overrides the game's timers (zero keeps the game's own).
type TimingConfig struct {
	Betting   time.Duration `yaml:"betting"`
	LastCall  time.Duration `yaml:"last_call"`
	Insurance time.Duration `yaml:"insurance"`
	Decision  time.Duration `yaml:"decision"`
	// Settle is the pause after a settlement before bets reopen.
	Settle time.Duration `yaml:"settle"`
}

// JournalConfig sizes the journal under data_dir/journal. Retention deletes
// whole segments only, and never one a restart still needs: the table
// replays from a checkpoint written between rounds every checkpoint_every
// rounds, and everything from the newest checkpoint on is kept whatever
// the limits say.
type JournalConfig struct {
	// SegmentSize is the size past which a segment is sealed.
	SegmentSize ByteSize `yaml:"segment_size"`
	// MaxSize deletes the oldest segments while the journal is larger; 0
	// keeps everything (then only the disk limits it, and a full disk
	// stops the table with an alarm).
	MaxSize ByteSize `yaml:"max_size"`
	// MaxAge deletes segments older than this (in record time); 0 keeps them.
	MaxAge time.Duration `yaml:"max_age"`
	// CheckpointEvery is the number of rounds between checkpoints.
	CheckpointEvery int `yaml:"checkpoint_every"`
	// GroupCommit is how long the journal waits for more records before
	// one fsync; 0 batches only what arrives during the previous fsync.
	GroupCommit time.Duration `yaml:"group_commit"`
}

// BrokerConfig selects the MQTT broker.
type BrokerConfig struct {
	// URL of an external broker (tcp://host:1883, ssl://host:8883). Empty
	// runs the embedded broker on EmbeddedAddr.
	URL string `yaml:"url"`
	// FailoverURLs are the other nodes of a broker cluster (NATS,
	// deploy/nats), tried in order after URL on every connection attempt.
	FailoverURLs []string `yaml:"failover_urls"`
	EmbeddedAddr string   `yaml:"embedded_addr"`
	Username     string   `yaml:"username"`
	Password     string   `yaml:"password"`
	CAFile       string   `yaml:"ca_file"`
	CertFile     string   `yaml:"cert_file"`
	KeyFile      string   `yaml:"key_file"`
	// SupervisorTokens is no longer used: supervisor commands are signed
	// with the supervisor's own key (console.supervisors_file). It is read
	// only to say so instead of failing on an unknown key.
	SupervisorTokens []string `yaml:"supervisor_tokens"`
	// StartUnchecked starts the table when the broker cannot be reached
	// at start, without reading its retained state: the check that the
	// data directory is not older than what the table published (a
	// restored backup). By default tabled waits for the broker.
	StartUnchecked bool `yaml:"start_unchecked"`
}

// ShoeConfig locates the card shoe.
type ShoeConfig struct {
	// Path of the serial device (/dev/ttyACM0). Ignored when USBSerial finds it.
	Path string `yaml:"path"`
	// USBSerial finds the device by its USB serial number, also after a
	// replug under a new /dev path.
	USBSerial     string        `yaml:"usb_serial"`
	Baud          int           `yaml:"baud"`
	AllowSerials  []string      `yaml:"allow_serials"`
	AllowFirmware []string      `yaml:"allow_firmware"`
	Silence       time.Duration `yaml:"silence_timeout"`
}

// GPIOConfig names the table's GPIO lines by function.
type GPIOConfig struct {
	// Sim uses simulated pins (no GPIO on this machine).
	Sim bool `yaml:"sim"`
	// Shuffler runs the dual-shoe swap when its lines are there (default
	// true); false leaves shoe changes to the dealer.
	Shuffler *bool              `yaml:"shuffler"`
	Pins     []pinmap.PinConfig `yaml:"pins"`
}

// DemoConfig runs the simulators in the daemon's process: a shoe on a
// pseudo-terminal (through the real serial path), a dealer who follows the
// instruction line, and a backend with simulated players over MQTT.
type DemoConfig struct {
	Enabled bool          `yaml:"enabled"`
	Seats   int           `yaml:"seats"`
	Seed    uint64        `yaml:"seed"`
	Pace    time.Duration `yaml:"pace"`
	Think   time.Duration `yaml:"think"`
	// Betting shortens the game's betting time for the demo.
	Betting time.Duration `yaml:"betting"`
	// Penetration is the share of the simulated shoe dealt before its cut
	// card: small, so a demo shows the shoe swap within minutes.
	Penetration float64 `yaml:"penetration"`
	// MisreadEvery makes the simulated shoe report a misread after every
	// Nth card (0: never), so a demo shows the supervisor's correction.
	MisreadEvery int `yaml:"misread_every"`
	// ShufflerFaultEvery makes the simulated shuffler lose the
	// acknowledgement of the first swap and of every Nth after it (0:
	// never): the shuffler's fault pauses the table, so a demo shows the
	// supervisor's shuffler reset (console, tablectl shuffler-reset) and
	// resume, after which the swap asked again is made.
	ShufflerFaultEvery int `yaml:"shuffler_fault_every"`
}

// DefaultConfig is the configuration without a file.
func DefaultConfig() Config {
	return Config{
		Studio: "studio1", Table: "table1", Game: "000", DataDir: "var/table1",
		LogFormat: "json", LogLevel: "info", MemoryLimit: 16 << 20,
		Broker:  BrokerConfig{EmbeddedAddr: "127.0.0.1:1883"},
		Console: ConsoleConfig{Addr: "127.0.0.1:8080"},
		Shoe:    ShoeConfig{Baud: 115200, Silence: 3 * time.Second},
		Journal: JournalConfig{SegmentSize: 8 << 20, MaxSize: 1 << 30, MaxAge: 90 * 24 * time.Hour, CheckpointEvery: table.DefaultCheckpointEvery},
		Demo:    DemoConfig{Seats: 3, Seed: 1, Pace: 350 * time.Millisecond, Think: 300 * time.Millisecond, Betting: 4 * time.Second, Penetration: 0.12},
	}
}

// LoadConfig reads a YAML file over the defaults; unknown keys are errors.
func LoadConfig(path string) (Config, error) {
	cfg := DefaultConfig()
	if path == "" {
		return cfg, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return cfg, fmt.Errorf("tabled: config: %w", err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	def := cfg.DataDir
	cfg.DataDir = "" // to see whether the file names one
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("tabled: config %s: %w", path, err)
	}
	cfg.configDataDir = cfg.DataDir
	if cfg.Shoe.Baud == 0 {
		// The builds before the range check (2026-11-24) opened the
		// shoe at its default speed for a baud of 0, as serialport
		// still does: a file that ran a table then runs it now.
		cfg.Shoe.Baud = serialport.DefaultBaud
	}
	if cfg.DataDir == "" {
		cfg.DataDir = def
	}
	if err := cfg.check(); err != nil {
		return cfg, fmt.Errorf("tabled: config %s: %w", path, err)
	}
	cfg.configFile = path
	return cfg, nil
}

// ErrConfig is a configuration value out of its range.
var ErrConfig = errors.New("invalid configuration")

// check rejects values that would make the daemon misbehave rather than
// fail: a negative size or a journal that could not keep one round.
func (c Config) check() error {
	for _, id := range []struct{ key, v string }{{"studio", c.Studio}, {"table", c.Table}} {
		if err := mqttlink.CheckTopicLevel(id.key, id.v); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	j := c.Journal
	switch {
	case j.SegmentSize < 0 || j.MaxSize < 0 || j.MaxAge < 0 || j.GroupCommit < 0:
		return fmt.Errorf("%w: journal sizes and times cannot be negative", ErrConfig)
	case j.SegmentSize > 0 && j.SegmentSize < 64<<10:
		return fmt.Errorf("%w: journal.segment_size %s is under 64KiB", ErrConfig, j.SegmentSize)
	case j.SegmentSize > maxSegment:
		// Retention deletes whole sealed segments: one of many GiB
		// would be kept whole past max_size and max_age.
		return fmt.Errorf("%w: journal.segment_size %s is over %s: retention deletes whole segments", ErrConfig, j.SegmentSize, ByteSize(maxSegment))
	case j.MaxSize > 0 && j.MaxSize < 2*max(j.SegmentSize, 64<<10):
		return fmt.Errorf("%w: journal.max_size %s must hold at least two segments of %s", ErrConfig, j.MaxSize, j.SegmentSize)
	case j.CheckpointEvery < 0:
		return fmt.Errorf("%w: journal.checkpoint_every cannot be negative", ErrConfig)
	case len(c.Broker.FailoverURLs) > 0 && c.Broker.URL == "":
		return fmt.Errorf("%w: broker.failover_urls needs broker.url (the embedded broker has no other nodes)", ErrConfig)
	case len(c.Broker.SupervisorTokens) > 0:
		return fmt.Errorf("%w: broker.supervisor_tokens is gone: supervisors sign their commands with their own key; create accounts with `tablectl supervisor add` (see README)", ErrConfig)
	case (c.Console.TLSCert == "") != (c.Console.TLSKey == ""):
		return fmt.Errorf("%w: console.tls_cert and console.tls_key go together", ErrConfig)
	case c.Shoe.Silence > 0 && c.Shoe.Silence < 2*shoereader.DefaultOptions().Heartbeat:
		// The shoe is quiet for up to a heartbeat while idle (and two when
		// one heartbeat is lost): a shorter watchdog raises shoe.silent and
		// shoe.alive every second on a healthy shoe between rounds.
		return fmt.Errorf("%w: shoe.silence_timeout %s is under two of the shoe's heartbeats (%s): an idle shoe would be declared silent", ErrConfig, c.Shoe.Silence, 2*shoereader.DefaultOptions().Heartbeat)
	case c.Shoe.Baud != 0 && (c.Shoe.Baud < minBaud || c.Shoe.Baud > maxBaud):
		return fmt.Errorf("%w: shoe.baud %d is out of range: %d to %d (0 keeps the default): the shoe's line speed, %d", ErrConfig, c.Shoe.Baud, minBaud, maxBaud, serialport.DefaultBaud)
	case c.Demo.MisreadEvery < 0:
		return fmt.Errorf("%w: demo.misread_every %d cannot be negative", ErrConfig, c.Demo.MisreadEvery)
	case c.Demo.ShufflerFaultEvery < 0:
		return fmt.Errorf("%w: demo.shuffler_fault_every %d cannot be negative", ErrConfig, c.Demo.ShufflerFaultEvery)
	case !(c.Demo.Penetration >= 0 && c.Demo.Penetration < 1):
		return fmt.Errorf("%w: demo.penetration %v: the share of the shoe dealt before the cut card, from 0 to under 1", ErrConfig, c.Demo.Penetration)
	case c.MemoryLimit > 0 && c.MemoryLimit < minMemoryLimit:
		return fmt.Errorf("%w: memory_limit %s is under %s: the collector would run without end (0 leaves the runtime's default)", ErrConfig, c.MemoryLimit, ByteSize(minMemoryLimit))
	case c.Journal.CheckpointEvery > maxCheckpointEvery:
		return fmt.Errorf("%w: journal.checkpoint_every %d is over %d rounds: a restart replays every round since the newest checkpoint, and retention keeps them all", ErrConfig, c.Journal.CheckpointEvery, maxCheckpointEvery)
	case c.Journal.GroupCommit > maxGroupCommit:
		return fmt.Errorf("%w: journal.group_commit %s is over %s: every card waits that long to be durable before the table moves on", ErrConfig, c.Journal.GroupCommit, maxGroupCommit)
	}
	for _, d := range c.times() {
		switch {
		case d.v < 0:
			// Ignored (the game's own would apply) or fired at once:
			// either way not what the file asked for.
			return fmt.Errorf("%w: %s %s cannot be negative", ErrConfig, d.key, d.v)
		case d.v != 0 && (d.v < d.min || d.v > d.max):
			return fmt.Errorf("%w: %s %s is out of range: %s to %s (0 keeps the default): %s", ErrConfig, d.key, d.v, d.min, d.max, d.why)
		}
	}
	rs, err := rules.Game(c.Game)
	if err != nil {
		return fmt.Errorf("%w: game %q: %w", ErrConfig, c.Game, err)
	}
	if err := c.checkLastCall(rs); err != nil {
		return err
	}
	if err := c.checkSeats(rs); err != nil {
		return err
	}
	return checkCurrency(c.Console.Currency)
}

// The ranges of the configuration's times. A time outside them is a typo
// (1ns for 10s, 10h for 10s), refused at load, not a choice the table
// can live by.
const (
	// minWindow bounds the windows people act in: the players' bets,
	// insurance answers and decisions, over a stream seconds behind the
	// table, and the yellow light's last call the dealer watches. The
	// machine times out who has not acted (the game's default action):
	// under a second it would play every hand itself.
	minWindow = time.Second
	// minSettle bounds the pause after a settlement before bets reopen:
	// the machine's own, no one acts in it (tests run it at 20ms), but
	// under 10ms it is no pause at all.
	minSettle = 10 * time.Millisecond
	// maxTime bounds every phase and watchdog time: longer, the table
	// would wait for a day; far longer, a deadline overflows and fires
	// at once.
	maxTime = 24 * time.Hour
	// minDemoStep bounds the demo's dealer pace and players' thinking:
	// under a millisecond the simulators spin.
	minDemoStep = time.Millisecond
	// minDemoBetting bounds the demo's betting window, in a third of
	// which the simulated players bet.
	minDemoBetting = 100 * time.Millisecond
	// maxGroupCommit bounds how long the journal waits for more records
	// before an fsync: the card waits with it.
	maxGroupCommit = 100 * time.Millisecond
	// maxCheckpointEvery bounds the rounds between checkpoints (100 by
	// default).
	maxCheckpointEvery = 10000
	// minMemoryLimit bounds a memory limit that is set: the daemon's
	// heap is several MiB at rest.
	minMemoryLimit = 8 << 20
	// maxSegment bounds a journal segment (8 MiB by default).
	maxSegment = 1 << 30
	// minBaud and maxBaud bound the shoe's serial line speed: the
	// slowest standard rate and the fastest a USB serial adapter runs.
	minBaud, maxBaud = 1200, 4000000
)

// configTime is one time of the configuration and its range.
type configTime struct {
	key      string
	v        time.Duration
	min, max time.Duration
	why      string
}

// times are the configuration's times and their ranges.
func (c Config) times() []configTime {
	const people = "people act in it (players, the dealer)"
	return []configTime{
		{"timing.betting", c.Timing.Betting, minWindow, maxTime, people},
		{"timing.last_call", c.Timing.LastCall, minWindow, maxTime, people},
		{"timing.insurance", c.Timing.Insurance, minWindow, maxTime, people},
		{"timing.decision", c.Timing.Decision, minWindow, maxTime, people},
		{"timing.settle", c.Timing.Settle, minSettle, maxTime, "the pause after a settlement before bets reopen"},
		{"shoe.silence_timeout", c.Shoe.Silence, 2 * shoereader.DefaultOptions().Heartbeat, maxTime, "two of the shoe's heartbeats at least"},
		{"demo.pace", c.Demo.Pace, minDemoStep, maxTime, "the simulated dealer's pace"},
		{"demo.think", c.Demo.Think, minDemoStep, maxTime, "the simulated players' thinking time"},
		{"demo.betting", c.Demo.Betting, minDemoBetting, maxTime, "the demo's betting window"},
		{"journal.max_age", c.Journal.MaxAge, time.Hour, 100 * 365 * maxTime, "recall needs the last rounds"},
	}
}

// checkLastCall refuses a last call longer than the betting window it
// is the end of (the table would cut it short without a word).
func (c Config) checkLastCall(rs *rules.Set) error {
	betting := cmp.Or(c.Timing.Betting, rs.BettingTime)
	if c.Demo.Enabled && c.Timing.Betting == 0 && c.Demo.Betting > 0 {
		betting = c.Demo.Betting
	}
	if c.Timing.LastCall > betting {
		return fmt.Errorf("%w: timing.last_call %s is longer than the betting window it ends (%s)", ErrConfig, c.Timing.LastCall, betting)
	}
	return nil
}

// checkSeats holds demo.seats to the game's rule set: its boxes, or for
// a common-draw game the players sharing seat 1, as many as one batch
// names (table.MaxBatchEntries). Only when the demo runs: a real table
// never reads the key, and examples before 2026-11-25 shipped seats: 7,
// which a table of a five-seat game (001, 004) carried without harm; it
// must not stop that table at an upgrade. A negative count was refused
// before the ranges and still is.
func (c Config) checkSeats(rs *rules.Set) error {
	if c.Demo.Seats < 0 {
		return fmt.Errorf("%w: demo.seats %d cannot be negative", ErrConfig, c.Demo.Seats)
	}
	if !c.Demo.Enabled {
		return nil
	}
	most, what := rs.MaxSeats, fmt.Sprintf("game %s has %d seats", rs.Code, rs.MaxSeats)
	if rs.CommonDraw {
		most, what = table.MaxBatchEntries, fmt.Sprintf("game %s's players share seat 1, at most %d (one batch)", rs.Code, table.MaxBatchEntries)
	}
	if c.Demo.Seats < 1 || c.Demo.Seats > most {
		return fmt.Errorf("%w: demo.seats %d is out of range: 1 to %d (%s)", ErrConfig, c.Demo.Seats, most, what)
	}
	return nil
}

// checkCurrency accepts an ISO 4217 code the console can show the
// table's minor units in: three capital letters of a currency in the
// standard (golang.org/x/text's table), not one of the X codes (metals,
// funds, testing, no currency), whose minor unit is the hundredth (the
// console writes amounts as hundredths: 1000 minor units of JPY, which
// has none, would show as ¥10). Empty keeps EUR.
func checkCurrency(code string) error {
	if code == "" {
		return nil
	}
	u, err := currency.ParseISO(code)
	switch {
	case err != nil || u.String() != code:
		return fmt.Errorf("%w: console.currency %q is not an ISO 4217 code (three capital letters: EUR, USD, GBP)", ErrConfig, code)
	case code[0] == 'X':
		return fmt.Errorf("%w: console.currency %q is not a currency the table plays in (ISO 4217's X codes are metals, funds, testing and no currency)", ErrConfig, code)
	}
	if scale, _ := currency.Standard.Rounding(u); scale != 2 {
		return fmt.Errorf("%w: console.currency %q has %d decimals: the console shows the table's minor units as hundredths (a currency of 2 decimals)", ErrConfig, code, scale)
	}
	return nil
}

// ByteSize is a size in bytes, written in YAML as a number of bytes or
// with a binary unit: 512KiB, 64MiB, 1GiB (KB, MB, GB read the same).
type ByteSize int64

var byteUnits = []struct {
	suffix string
	shift  uint
}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"GB", 30}, {"MB", 20}, {"KB", 10}, {"B", 0}}

// UnmarshalYAML reads a ByteSize.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = v
	return nil
}

// ParseByteSize parses "64MiB", "512KiB", "1GiB" or a plain byte count.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	shift := uint(0)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%w: size %q: want a whole number of bytes, KiB, MiB or GiB", ErrConfig, s)
	}
	return ByteSize(n << shift), nil
}

// String writes the size with the largest unit that divides it.
func (b ByteSize) String() string {
	for _, u := range byteUnits[:3] {
		if b != 0 && b%(1<<u.shift) == 0 {
			return strconv.FormatInt(int64(b)>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}

// checkFiles opens, read-only, the files and the device a start would
// open, so that --check-config does not pass a configuration whose start
// then fails on them: the console's TLS pair, the broker's CA bundle and
// client pair, the accounts file, and the shoe's serial device (or its
// USB serial number). It creates and modifies nothing. The error names
// the key to change; warnings are what a start lives with but an
// operator should hear of (a shoe not plugged in now: a start waits for
// it, the shoe check failing).
func (c Config) checkFiles() (warnings []string, err error) {
	if c.Console.Addr != "off" && c.Console.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(c.Console.TLSCert, c.Console.TLSKey); err != nil {
			return nil, fmt.Errorf("%w: console.tls_cert, console.tls_key: %w", ErrConfig, err)
		}
	}
	if b := c.Broker; b.URL != "" {
		if b.CAFile != "" {
			pem, err := os.ReadFile(b.CAFile)
			if err != nil {
				return nil, fmt.Errorf("%w: broker.ca_file: %w", ErrConfig, err)
			}
			if !x509.NewCertPool().AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: broker.ca_file %s: no PEM certificate in it", ErrConfig, b.CAFile)
			}
		}
		if (b.CertFile == "") != (b.KeyFile == "") {
			return nil, fmt.Errorf("%w: broker.cert_file and broker.key_file go together", ErrConfig)
		}
		if b.CertFile != "" {
			if _, err := tls.LoadX509KeyPair(b.CertFile, b.KeyFile); err != nil {
				return nil, fmt.Errorf("%w: broker.cert_file, broker.key_file: %w", ErrConfig, err)
			}
		}
	}
	// A missing file is an empty list (tablectl supervisor add writes
	// it); one that cannot be read or parsed stops a start.
	if _, err := supervisors.Load(supervisorsPath(c)); err != nil {
		key := "console.supervisors_file"
		if c.Console.SupervisorsFile == "" {
			key += " (default data_dir/" + supervisors.FileName + ")"
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, key, err)
	}
	if c.Demo.Enabled {
		return nil, nil // the demo's shoe is its own pseudo-terminal
	}
	return c.checkShoeDevice()
}

// checkShoeDevice checks the shoe's device without opening it: opening a
// serial line asserts DTR (which resets some USB boards) and, while the
// running tabled holds the line, may fail or disturb it; an upgrade check
// runs beside that tabled. So the device must exist as a character device
// that this user may read and write (access(2): the check runs as the
// tabled user). Missing now is a warning: a start waits for the shoe to
// be plugged in.
func (c Config) checkShoeDevice() (warnings []string, err error) {
	s := c.Shoe
	switch {
	case s.USBSerial != "":
		if _, err := serialport.FindUSB(s.USBSerial); err != nil {
			return []string{fmt.Sprintf("shoe.usb_serial %q: no such USB serial adapter plugged in now (%v): a start waits for it, the shoe check failing", s.USBSerial, err)}, nil
		}
		return nil, nil
	case s.Path == "":
		return nil, fmt.Errorf("%w: shoe.path: no shoe configured (shoe.path or shoe.usb_serial, or demo.enabled)", ErrConfig)
	}
	fi, err := os.Stat(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return []string{fmt.Sprintf("shoe.path %s does not exist now (the shoe unplugged, or the udev rule's link not made): a start waits for it, the shoe check failing", s.Path)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: shoe.path: %w", ErrConfig, err)
	}
	if fi.Mode()&os.ModeCharDevice == 0 {
		return nil, fmt.Errorf("%w: shoe.path %s is not a character device (%s): the shoe's serial line is /dev/ttyACM0, /dev/ttyUSB0 or the udev rule's link", ErrConfig, s.Path, fi.Mode().Type())
	}
	if err := syscall.Access(s.Path, accessReadWrite); err != nil {
		return nil, fmt.Errorf("%w: shoe.path %s: this user (uid %d) may not read and write it: %w (the dialout group, or the udev rule's mode)", ErrConfig, s.Path, os.Getuid(), err)
	}
	return nil, nil
}

// accessReadWrite is access(2)'s R_OK|W_OK.
const accessReadWrite = 0x4 | 0x2
