package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/supervisors"
)

const supervisorUsage = `usage: tablectl supervisor add|rekey|passwd|remove|list [flags] [NAME]

  add NAME      create an account: the password is asked on the terminal
                (or read from the first line of stdin), never given as an
                argument; a signing key for remote commands is written to
                --key-out (default ~/.config/livetable/NAME.key)
  rekey NAME    rotate the account's signing key: a new key is written to
                --key-out (default ~/.config/livetable/NAME.key; a key
                already there is moved aside to NAME.key.replaced-TIME,
                never overwritten); commands signed with the old key are
                refused from the reload on; the password and role stay
  passwd NAME   set the account's console password (asked as for add);
                the key and role stay
  remove NAME   delete an account (revoke: its key and password stop
                working at once)
  list          the accounts, their roles and whether they have a key

The accounts file is the data directory's supervisors.yaml (or the
config's console.supervisors_file). A running tabled on this box reads it
again at once; otherwise send it SIGHUP (systemctl reload tabled@TABLE).
`

// runSupervisorAdmin: `tablectl supervisor add|remove|list`.
func runSupervisorAdmin(g *globals, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("supervisor", "add|rekey|passwd|remove|list [NAME]", g)
	role := fs.String("role", supervisors.RoleSupervisor, "add: supervisor (may command) or viewer (may only look)")
	keyOut := fs.String("key-out", "", "add, rekey: where to write the signing key (default ~/.config/livetable/NAME.key)")
	file := fs.String("file", "", "the accounts file (default: the data directory's "+supervisors.FileName+")")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), supervisorUsage, "\nflags:\n")
		fs.PrintDefaults()
	}
	pos, code, ok := parseCmd(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	path := *file
	if path == "" {
		path = g.supervisorsFile()
	}
	if len(pos) == 0 {
		fmt.Fprint(stderr, supervisorUsage)
		return 2
	}
	list, err := supervisors.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	switch {
	case pos[0] == "list" && len(pos) == 1:
		if len(list.Accounts) == 0 {
			fmt.Fprintf(stdout, "no accounts in %s\n", path)
			return 0
		}
		fmt.Fprintf(stdout, "%-20s %-11s %s\n", "name", "role", "signing key")
		for _, a := range list.Accounts {
			key := "no"
			if a.Key != "" {
				key = "yes"
			}
			fmt.Fprintf(stdout, "%-20s %-11s %s\n", a.Name, a.Role, key)
		}
		return 0
	case pos[0] == "remove" && len(pos) == 2:
		if err := list.Remove(pos[1]); err != nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
		if err := saveAccounts(list, path); err != nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
		fmt.Fprintf(stdout, "removed %s from %s\n", pos[1], path)
		return reload(g, stdout, stderr)
	case pos[0] == "rekey" && len(pos) == 2:
		return rekey(g, list, path, pos[1], *keyOut, stdout, stderr)
	case pos[0] == "passwd" && len(pos) == 2:
		name := pos[1]
		if _, exists := list.Lookup(name); !exists {
			fmt.Fprintf(stderr, "tablectl: %s has no account in %s\n", name, path)
			return 1
		}
		pw, err := readPassword(stdin, stderr, "new password for "+name+": ")
		if err == nil {
			err = list.SetPassword(name, pw)
		}
		if err == nil {
			err = saveAccounts(list, path)
		}
		if err != nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
		fmt.Fprintf(stdout, "new password for %s in %s (their console sessions end at their next request)\n", name, path)
		return reload(g, stdout, stderr)
	case pos[0] == "add" && len(pos) == 2:
		name := pos[1]
		if _, exists := list.Lookup(name); exists {
			fmt.Fprintf(stderr, "tablectl: %s already has an account in %s (remove it first)\n", name, path)
			return 1
		}
		out := *keyOut
		if out == "" {
			out = defaultKeyFile(name)
		}
		if _, err := os.Stat(out); err == nil {
			fmt.Fprintf(stderr, "tablectl: %s exists: give another --key-out (a key is never overwritten)\n", out)
			return 1
		}
		pw, err := readPassword(stdin, stderr, "password for "+name+": ")
		if err != nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
		a, key, err := supervisors.New(name, *role, pw)
		if err == nil {
			err = list.Add(a)
		}
		if err == nil {
			err = supervisors.WriteKey(out, key)
		}
		if err == nil {
			err = saveAccounts(list, path)
		}
		if err != nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
		fmt.Fprintf(stdout, "added %s (%s) to %s\nsigning key for remote commands: %s (keep it private; copy it to %s's own machine)\n", name, a.Role, path, out, name)
		return reload(g, stdout, stderr)
	}
	fmt.Fprint(stderr, supervisorUsage)
	return 2
}

// rekey rotates an account's signing key. The new key is written beside
// out first and the accounts saved, so that a failure leaves the old key
// working; a key already at out is then moved aside (never overwritten:
// it may be the only copy of a key another table still trusts) and the
// new one takes its place.
func rekey(g *globals, list *supervisors.List, path, name, out string, stdout, stderr io.Writer) int {
	if _, exists := list.Lookup(name); !exists {
		fmt.Fprintf(stderr, "tablectl: %s has no account in %s (supervisor add)\n", name, path)
		return 1
	}
	if out == "" {
		out = defaultKeyFile(name)
	}
	key, err := list.Rekey(name)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	fresh := out + ".new"
	if err := supervisors.WriteKey(fresh, key); err != nil {
		fmt.Fprintf(stderr, "tablectl: %v (nothing changed)\n", err)
		return 1
	}
	if err := saveAccounts(list, path); err != nil {
		_ = os.Remove(fresh)
		fmt.Fprintf(stderr, "tablectl: %v (nothing changed: the old key still works)\n", err)
		return 1
	}
	aside := ""
	if _, err := os.Stat(out); err == nil {
		aside = out + ".replaced-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Rename(out, aside); err != nil {
			fmt.Fprintf(stderr, "tablectl: the account has the new key, written to %s; move it to %s yourself: %v\n", fresh, out, err)
			return 1
		}
	}
	if err := os.Rename(fresh, out); err != nil {
		fmt.Fprintf(stderr, "tablectl: the account has the new key, written to %s; move it to %s yourself: %v\n", fresh, out, err)
		return 1
	}
	fmt.Fprintf(stdout, "new signing key for %s: %s (keep it private; copy it to %s's own machine)\n", name, out, name)
	if aside != "" {
		fmt.Fprintf(stdout, "the old key, moved to %s, is refused once tabled has read the accounts again\n", aside)
	}
	return reload(g, stdout, stderr)
}

// reload asks a tabled running on this data directory to read the
// accounts again; without one it says how. A tabled that answers but
// cannot read the file (its owner, its mode) is an error: the account
// would not work until someone looks.
func reload(g *globals, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rep, err := localctl.Do(ctx, filepath.Join(g.dataDir, localctl.SocketName), localctl.Request{Command: "reload"})
	switch {
	case err != nil:
		fmt.Fprintln(stdout, "no tabled answered on this data directory: a tabled started later reads the file; a running one does on SIGHUP (systemctl reload tabled@TABLE)")
		return 0
	case !rep.Accepted:
		fmt.Fprintf(stderr, "tablectl: the running tabled could not read the accounts again: %s (it keeps the accounts it had)\n", rep.Error)
		return 1
	}
	fmt.Fprintln(stdout, "tabled has read the accounts again")
	return 0
}

// saveAccounts writes the accounts file, given to its directory's owner
// (giveToDirOwner).
func saveAccounts(list *supervisors.List, path string) error {
	if err := list.Save(path); err != nil {
		return err
	}
	return giveToDirOwner(path)
}

// giveToDirOwner gives a file tablectl wrote in a table's data directory
// to that directory's owner and group when tablectl runs as root: tabled
// runs as its own user (the unit's livetable, whose data directory is
// 0750), and `sudo tablectl ...` is how an operator reaches that
// directory, so a file left to root with mode 0640 was one tabled could
// not read (supervisors.yaml: nobody could log in; accepted-loss.jsonl:
// tabled stopped at start, permission denied).
func giveToDirOwner(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if err := os.Chown(path, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("give %s to the owner of its directory: %w", path, err)
	}
	return nil
}

// defaultKeyFile is where a supervisor's signing key lives by default.
func defaultKeyFile(name string) string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "livetable", name+".key")
}

// readPassword asks for a password twice on a terminal without echo, or
// reads one line of stdin when it is not a terminal (scripts, tests).
func readPassword(stdin io.Reader, stderr io.Writer, prompt string) (string, error) {
	f, isFile := stdin.(*os.File)
	if isFile {
		if old, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			read := func(p string) (string, error) {
				fmt.Fprint(stderr, p)
				quiet := *old
				quiet.Lflag &^= unix.ECHO
				quiet.Lflag |= unix.ICANON | unix.ISIG
				if err := unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, &quiet); err != nil {
					return "", fmt.Errorf("terminal: %w", err)
				}
				defer func() {
					_ = unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, old)
					fmt.Fprintln(stderr)
				}()
				return readLine(f)
			}
			pw, err := read(prompt)
			if err != nil {
				return "", err
			}
			again, err := read("again: ")
			if err != nil {
				return "", err
			}
			if pw != again {
				return "", errors.New("the passwords differ")
			}
			return pw, nil
		}
	}
	return readLine(stdin)
}

// readLine reads one line byte by byte, so nothing after it is consumed.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	one := make([]byte, 1)
	for {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				break
			}
			b.WriteByte(one[0])
		}
		if err == io.EOF {
			if b.Len() == 0 {
				return "", errors.New("no password on stdin")
			}
			break
		}
		if err != nil {
			return "", err
		}
	}
	return strings.TrimRight(b.String(), "\r"), nil
}
