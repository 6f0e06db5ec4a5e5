// Package supervisors is the table's list of supervisor accounts: one
// identity per person, used both to log in to the console (a bcrypt hash
// of the password) and to sign commands sent from afar (an Ed25519 public
// key; the private key stays with the supervisor). The list is a YAML file
// that `tablectl supervisor add|remove|list` manages and tabled reads at
// start and again on SIGHUP (Store.Reload).
package supervisors

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync/atomic"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
)

// FileName is the accounts file's name in the table's data directory.
const FileName = "supervisors.yaml"

// Roles. A supervisor may pause, resume, void and correct; a viewer sees
// the supervisor view and recall but may not command.
const (
	RoleSupervisor = "supervisor"
	RoleViewer     = "viewer"
)

// MinPassword is the shortest password accepted for an account.
const MinPassword = 8

// Sentinel errors.
var (
	// ErrUnknown is a name with no account.
	ErrUnknown = errors.New("supervisors: no such account")
	// ErrExists is an account added twice.
	ErrExists = errors.New("supervisors: account exists")
	// ErrInvalid is an account the file may not hold: a bad name, role,
	// hash or key, or a password too short.
	ErrInvalid = errors.New("supervisors: invalid account")
)

// Account is one person.
type Account struct {
	// Name is the login name, recorded as `by` in the journal.
	Name string `yaml:"name"`
	// Role is RoleSupervisor or RoleViewer.
	Role string `yaml:"role"`
	// Hash is the bcrypt hash of the console password.
	Hash string `yaml:"hash"`
	// Key is the base64 Ed25519 public key that verifies the account's
	// signed commands; empty means the account cannot command remotely.
	Key string `yaml:"key,omitempty"`
}

// CanCommand reports whether the account may pause, resume, void and correct.
func (a Account) CanCommand() bool { return a.Role == RoleSupervisor }

// PublicKey decodes Key; nil when there is none.
func (a Account) PublicKey() ed25519.PublicKey {
	b, err := base64.StdEncoding.DecodeString(a.Key)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil
	}
	return ed25519.PublicKey(b)
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9._-]{0,31}$`)

func (a Account) check() error {
	if !nameRE.MatchString(a.Name) {
		return fmt.Errorf("%w: name %q: lower-case letters, digits, '.', '_' or '-', starting with a letter, at most 32", ErrInvalid, a.Name)
	}
	if a.Role != RoleSupervisor && a.Role != RoleViewer {
		return fmt.Errorf("%w: %s: role %q (supervisor or viewer)", ErrInvalid, a.Name, a.Role)
	}
	if _, err := bcrypt.Cost([]byte(a.Hash)); err != nil {
		return fmt.Errorf("%w: %s: hash is not a bcrypt hash", ErrInvalid, a.Name)
	}
	if a.Key != "" && a.PublicKey() == nil {
		return fmt.Errorf("%w: %s: key is not a base64 Ed25519 public key", ErrInvalid, a.Name)
	}
	return nil
}

// List is the accounts, sorted by name.
type List struct {
	Accounts []Account `yaml:"supervisors"`
}

// Lookup returns the named account.
func (l *List) Lookup(name string) (Account, bool) {
	for _, a := range l.Accounts {
		if a.Name == name {
			return a, true
		}
	}
	return Account{}, false
}

// New makes an account: the password's bcrypt hash and a fresh Ed25519
// key pair, whose private half is returned for the supervisor to keep.
func New(name, role, password string) (Account, ed25519.PrivateKey, error) {
	h, err := hashPassword(password)
	if err != nil {
		return Account{}, nil, err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Account{}, nil, fmt.Errorf("supervisors: key: %w", err)
	}
	a := Account{Name: name, Role: role, Hash: h, Key: base64.StdEncoding.EncodeToString(pub)}
	if err := a.check(); err != nil {
		return Account{}, nil, err
	}
	return a, priv, nil
}

// hashPassword is a password's bcrypt hash, for a password of the
// lengths an account may have.
func hashPassword(password string) (string, error) {
	if len(password) < MinPassword {
		return "", fmt.Errorf("%w: password shorter than %d characters", ErrInvalid, MinPassword)
	}
	if len(password) > 72 {
		return "", fmt.Errorf("%w: password longer than 72 bytes (bcrypt's limit)", ErrInvalid)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("supervisors: hash: %w", err)
	}
	return string(h), nil
}

// Add puts a new account in the list.
func (l *List) Add(a Account) error {
	if err := a.check(); err != nil {
		return err
	}
	if _, ok := l.Lookup(a.Name); ok {
		return fmt.Errorf("%w: %s", ErrExists, a.Name)
	}
	l.Accounts = append(l.Accounts, a)
	sort.Slice(l.Accounts, func(i, j int) bool { return l.Accounts[i].Name < l.Accounts[j].Name })
	return nil
}

// Rekey gives the named account a fresh Ed25519 key pair and returns
// its private half: the key it had verifies nothing from the next
// reload on (a key lost, a laptop stolen, a routine rotation). Its
// password and role stay.
func (l *List) Rekey(name string) (ed25519.PrivateKey, error) {
	for i := range l.Accounts {
		if l.Accounts[i].Name != name {
			continue
		}
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("supervisors: key: %w", err)
		}
		l.Accounts[i].Key = base64.StdEncoding.EncodeToString(pub)
		return priv, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnknown, name)
}

// SetPassword gives the named account a new console password; its key
// and role stay.
func (l *List) SetPassword(name, password string) error {
	for i := range l.Accounts {
		if l.Accounts[i].Name != name {
			continue
		}
		h, err := hashPassword(password)
		if err != nil {
			return err
		}
		l.Accounts[i].Hash = h
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnknown, name)
}

// Remove takes an account out of the list.
func (l *List) Remove(name string) error {
	for i, a := range l.Accounts {
		if a.Name == name {
			l.Accounts = append(l.Accounts[:i], l.Accounts[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrUnknown, name)
}

// Load reads an accounts file. A missing file is an empty list (a table
// nobody supervises yet); an invalid one is an error, naming the account.
func Load(path string) (*List, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &List{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("supervisors: %w", err)
	}
	var l List
	if err := yaml.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("supervisors: %s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, a := range l.Accounts {
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("supervisors: %s: %w", path, err)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("supervisors: %s: %w: %s twice", path, ErrInvalid, a.Name)
		}
		seen[a.Name] = true
	}
	return &l, nil
}

const fileHeader = "# livetable supervisor accounts: managed with `tablectl supervisor add|rekey|passwd|remove|list`.\n" +
	"# tabled reads this file at start and on SIGHUP. Hashes are bcrypt; keys verify signed commands.\n"

// Save writes the list atomically (a temporary file renamed over the old
// one), readable by the owner and the group only (0640): the hashes can
// be attacked offline by whoever reads them.
func (l *List) Save(path string) error {
	b, err := yaml.Marshal(l)
	if err != nil {
		return fmt.Errorf("supervisors: encode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("supervisors: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".supervisors-*")
	if err != nil {
		return fmt.Errorf("supervisors: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(fileHeader + string(b)); err != nil {
		tmp.Close()
		return fmt.Errorf("supervisors: %w", err)
	}
	if err := tmp.Chmod(0o640); err != nil {
		tmp.Close()
		return fmt.Errorf("supervisors: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("supervisors: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("supervisors: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("supervisors: %w", err)
	}
	return nil
}

// Store is the accounts tabled serves from: read at start, swapped whole
// on Reload, read without locks by the console and the MQTT link.
type Store struct {
	path string
	cur  atomic.Pointer[List]
}

// Open reads path into a Store.
func Open(path string) (*Store, error) {
	s := &Store{path: path}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Static is a Store over a fixed list (the demo's, tests').
func Static(l *List) *Store {
	s := &Store{}
	s.cur.Store(l)
	return s
}

// Path is the file the Store reads ("" for a Static one).
func (s *Store) Path() string { return s.path }

// Reload reads the file again; on an error the accounts in use stay.
func (s *Store) Reload() error {
	if s.path == "" {
		return nil
	}
	l, err := Load(s.path)
	if err != nil {
		return err
	}
	s.cur.Store(l)
	return nil
}

// Lookup returns the named account.
func (s *Store) Lookup(name string) (Account, bool) { return s.cur.Load().Lookup(name) }

// Len is the number of accounts.
func (s *Store) Len() int { return len(s.cur.Load().Accounts) }

// SupervisorKey returns the public key of an account allowed to command
// (the MQTT link's KeyRing).
func (s *Store) SupervisorKey(name string) (ed25519.PublicKey, bool) {
	a, ok := s.Lookup(name)
	if !ok || !a.CanCommand() {
		return nil, false
	}
	k := a.PublicKey()
	return k, k != nil
}

// PasswordHash returns the bcrypt hash of the account (the console's
// login) and whether the account may command.
func (s *Store) PasswordHash(name string) (hash string, canCommand, ok bool) {
	a, ok := s.Lookup(name)
	return a.Hash, a.CanCommand(), ok
}

// WriteKey writes a private key as PEM (PKCS #8), readable by its owner
// only (0600); it refuses to overwrite a key file.
func WriteKey(path string, key ed25519.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("supervisors: key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("supervisors: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("supervisors: key: %w", err)
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		return fmt.Errorf("supervisors: key: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("supervisors: key: %w", err)
	}
	return nil
}

// ReadKey reads a private key written by WriteKey.
func ReadKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("supervisors: key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("supervisors: key %s: %w: not a PEM private key", path, ErrInvalid)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("supervisors: key %s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("supervisors: key %s: %w: not an Ed25519 key", path, ErrInvalid)
	}
	return ek, nil
}
