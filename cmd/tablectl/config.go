package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/livetable/livetable/studio/supervisors"
)

// defaultDataDir is where `make run` keeps the demo's data: with no
// --config and no --data-dir, tablectl looks there.
const defaultDataDir = "var/demo"

// tabledDataDir is tabled's own default data directory
// (cmd/tabled.DefaultConfig): where tabled --config FILE runs when FILE
// names no data_dir, so where tablectl --config FILE looks then.
const tabledDataDir = "var/table1"

// tabledConfig is the part of tabled's configuration file tablectl reads
// for its defaults, so that on a table box `tablectl --config
// /etc/livetable/tabled.yaml ...` needs no other flag. Keys tablectl does
// not use are ignored.
type tabledConfig struct {
	Studio  string `yaml:"studio"`
	Table   string `yaml:"table"`
	Game    string `yaml:"game"`
	DataDir string `yaml:"data_dir"`
	Broker  struct {
		URL          string   `yaml:"url"`
		FailoverURLs []string `yaml:"failover_urls"`
		EmbeddedAddr string   `yaml:"embedded_addr"`
		Username     string   `yaml:"username"`
		Password     string   `yaml:"password"`
		CAFile       string   `yaml:"ca_file"`
		CertFile     string   `yaml:"cert_file"`
		KeyFile      string   `yaml:"key_file"`
	} `yaml:"broker"`
	Console struct {
		SupervisorsFile string `yaml:"supervisors_file"`
	} `yaml:"console"`
}

// globals are the settings every command shares: the config file and the
// data directory, accepted before or after the command's name.
type globals struct {
	config  string
	dataDir string
	cfg     tabledConfig
}

// loadGlobals finds --config and --data-dir anywhere in args (before the
// command's own flags are known) and reads the config file.
func loadGlobals(args []string) (*globals, error) {
	g := &globals{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, name := range []string{"config", "data-dir"} {
			for _, p := range []string{"-" + name, "--" + name} {
				v, ok := "", false
				switch {
				case a == p && i+1 < len(args):
					v, ok = args[i+1], true
					i++
				case strings.HasPrefix(a, p+"="):
					v, ok = strings.TrimPrefix(a, p+"="), true
				}
				if ok && name == "config" {
					g.config = v
				} else if ok {
					g.dataDir = v
				}
			}
		}
	}
	g.cfg.Studio, g.cfg.Table, g.cfg.Game = "studio1", "table1", "000"
	g.cfg.Broker.EmbeddedAddr = "127.0.0.1:1883"
	if g.config != "" {
		b, err := os.ReadFile(g.config)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if err := yaml.Unmarshal(b, &g.cfg); err != nil {
			return nil, fmt.Errorf("config %s: %w", g.config, err)
		}
	}
	if g.dataDir == "" {
		g.dataDir = g.cfg.DataDir
	}
	if g.dataDir == "" && g.config != "" {
		g.dataDir = tabledDataDir
	}
	if g.dataDir == "" {
		g.dataDir = defaultDataDir
	}
	return g, nil
}

// register puts --config and --data-dir on a command's flags, so they may
// come after the command too (loadGlobals has read them already).
func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.config, "config", g.config, "tabled's configuration file: tablectl takes its defaults from it")
	fs.StringVar(&g.dataDir, "data-dir", g.dataDir, "the table's data directory (tabled --data-dir; default: the config's data_dir, else "+defaultDataDir+", where make run writes)")
}

// supervisorsFile is the accounts file tabled reads.
func (g *globals) supervisorsFile() string {
	if g.cfg.Console.SupervisorsFile != "" {
		return g.cfg.Console.SupervisorsFile
	}
	return filepath.Join(g.dataDir, supervisors.FileName)
}

// brokerURL is the broker tabled uses: its external one, else its
// embedded one.
func (g *globals) brokerURL() string {
	if g.cfg.Broker.URL != "" {
		// The nodes of a cluster, in tabled's order: --broker's list form.
		return strings.Join(append([]string{g.cfg.Broker.URL}, g.cfg.Broker.FailoverURLs...), ",")
	}
	return "tcp://" + g.cfg.Broker.EmbeddedAddr
}

// parseArgs parses a command's flags wherever they stand among its
// positional arguments (`round '#07:35:00' --date 2026-11-23`), and
// returns the positional ones. help is true for -h.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, help bool, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return nil, true, nil
			}
			return nil, false, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, false, nil
		}
		// fs.Parse stops at the first positional argument, or after "--"
		// (then everything left is positional).
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), false, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlags makes a command's flag set with its usage line: -h prints the
// usage and the flags on stdout, a flag error prints them on stderr.
func newFlags(name, synopsis string, g *globals) *flag.FlagSet {
	fs := flag.NewFlagSet("tablectl "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: tablectl %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	if g != nil {
		g.register(fs)
	}
	return fs
}

// parseCmd parses a command's arguments: on -h it prints the usage on
// stdout (code 0), on a bad flag the error and the usage on stderr (code
// 2); ok is false in both cases.
func parseCmd(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	pos, help, err := parseArgs(fs, args)
	switch {
	case help:
		fs.SetOutput(stdout)
		fs.Usage()
		return nil, 0, false
	case err != nil:
		fs.SetOutput(stderr)
		fmt.Fprintln(stderr, "tablectl:", err)
		fs.Usage()
		return nil, 2, false
	}
	fs.SetOutput(stderr)
	return pos, 0, true
}
