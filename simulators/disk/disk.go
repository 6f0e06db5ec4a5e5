package disk

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/livetable/livetable/table/vfs"
)

// Options configures a Disk.
type Options struct {
	// Seed drives every choice the disk makes (what a power cut keeps,
	// where it tears).
	Seed uint64
	// KeepUnsynced lets a power cut keep a seeded prefix of the unsynced
	// writes and directory changes, the first one after it torn; false
	// loses all of them (see the package comment).
	KeepUnsynced bool
	// TearZeros lets a torn write's lost bytes read back as zeros (an
	// allocated, unwritten tail) half the time, instead of being cut off.
	TearZeros bool
	// Capacity bounds the bytes of all files; a write past it writes what
	// fits and fails with ENOSPC. 0 means no bound.
	Capacity int64
}

// ErrPowerCut is the cause of every operation at or after a power cut,
// until Reboot (and of every operation on a handle opened before it).
var ErrPowerCut = errors.New("disk: power cut")

// Op names the operations faults can be injected into.
type Op uint8

// The operations.
const (
	OpWrite    Op = iota + 1 // Write and WriteAt
	OpSync                   // a file's fsync
	OpSyncDir                // a directory's fsync
	OpOpen                   // OpenFile
	OpTruncate               // Truncate, and O_TRUNC
	OpRename                 // Rename
	OpRemove                 // Remove
)

var opNames = [...]string{"", "write", "sync", "syncdir", "open", "truncate", "rename", "remove"}

// String names the operation.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Fault makes matching operations fail.
type Fault struct {
	// Op is the operation that fails.
	Op Op
	// Path, when not empty, must be contained in the operation's path.
	Path string
	// N is which matching operation fails, counting from 1 from when the
	// fault is injected (0 is taken as 1).
	N int
	// Err is the cause returned (in an *fs.PathError), e.g. syscall.EIO.
	Err error
	// Every makes every matching operation from the N-th on fail, not
	// only the N-th.
	Every bool
}

type faultState struct {
	Fault
	seen int
}

// write is one unsynced change to a file: data at off, or a truncation to
// size.
type write struct {
	off   int64
	data  []byte
	trunc bool
	size  int64
}

func (w write) apply(buf []byte) []byte {
	if w.trunc {
		return resize(buf, w.size)
	}
	end := w.off + int64(len(w.data))
	if end > int64(len(buf)) {
		buf = resize(buf, end)
	}
	copy(buf[w.off:], w.data)
	return buf
}

func resize(buf []byte, size int64) []byte {
	if size <= int64(len(buf)) {
		return buf[:size]
	}
	return append(buf, make([]byte, size-int64(len(buf)))...)
}

// inode is a file's content: what reads see now (live), what a power cut
// keeps for certain (durable), and the writes in between.
type inode struct {
	live    []byte
	durable []byte
	pending []write
}

// nsOp is one unsynced directory change.
type nsOp struct {
	kind     string // create, remove, rename
	path, to string
	ino      *inode
}

func (o nsOp) touches(dir string) bool {
	return filepath.Dir(o.path) == dir || (o.to != "" && filepath.Dir(o.to) == dir)
}

// Disk is a simulated disk. The zero value is not usable: call New.
type Disk struct {
	mu        sync.Mutex
	opts      Options
	rng       *rand.Rand
	gen       int  // handles of an older generation died in a power cut
	dead      bool // the power is cut, until Reboot
	live      map[string]*inode
	durable   map[string]*inode // the namespace a power cut keeps for certain
	pendingNS []nsOp
	dirs      map[string]bool
	locks     map[string]bool
	ops       int // mutating operations so far
	cutAt     int // the power is cut before this operation (0: never)
	faults    []*faultState
	cuts      int
}

var _ vfs.FS = (*Disk)(nil)

// New returns an empty disk.
func New(opts Options) *Disk {
	return &Disk{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x5eed)),
		live: map[string]*inode{}, durable: map[string]*inode{}, dirs: map[string]bool{"/": true, ".": true},
		locks: map[string]bool{}}
}

// Inject adds a fault.
func (d *Disk) Inject(f Fault) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f.N <= 0 {
		f.N = 1
	}
	d.faults = append(d.faults, &faultState{Fault: f})
}

// ClearFaults removes every injected fault.
func (d *Disk) ClearFaults() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faults = nil
}

// SetCapacity bounds the bytes of all files (0: no bound).
func (d *Disk) SetCapacity(n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.opts.Capacity = n
}

// Ops is the number of mutating operations (writes, truncations, fsyncs,
// creations, renames, removals) done so far: the positions PowerCutAt
// counts in.
func (d *Disk) Ops() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ops
}

// PowerCutAt cuts the power just before the n-th mutating operation from
// now (n >= 1).
func (d *Disk) PowerCutAt(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cutAt = d.ops + max(n, 1)
}

// NoPowerCut takes back a cut PowerCutAt planned: the power stays on.
func (d *Disk) NoPowerCut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cutAt = 0
}

// PowerCut cuts the power now: every handle dies, and the disk keeps what
// the model says a power cut keeps. Reboot makes it usable again.
func (d *Disk) PowerCut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dead {
		d.cut()
	}
}

// IsCut reports whether the power is cut (until Reboot).
func (d *Disk) IsCut() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead
}

// Cuts is the number of power cuts so far.
func (d *Disk) Cuts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cuts
}

// Reboot powers the disk on again after a cut (a no-op when it was not
// cut). Handles opened before the cut stay dead.
func (d *Disk) Reboot() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dead, d.cutAt = false, 0
}

// cut resolves a power cut. d.mu is held.
func (d *Disk) cut() {
	d.cuts++
	k := 0
	if d.opts.KeepUnsynced {
		k = d.rng.IntN(len(d.pendingNS) + 1)
	}
	for _, o := range d.pendingNS[:k] {
		applyNS(d.durable, o)
	}
	d.pendingNS = nil
	// Every file the namespace keeps, in name order for the seed's sake.
	names := make([]string, 0, len(d.durable))
	for name := range d.durable {
		names = append(names, name)
	}
	slices.Sort(names)
	done := map[*inode]bool{}
	for _, name := range names {
		ino := d.durable[name]
		if done[ino] {
			continue
		}
		done[ino] = true
		d.settle(ino)
	}
	d.live = map[string]*inode{}
	for name, ino := range d.durable {
		d.live[name] = ino
	}
	d.locks = map[string]bool{}
	d.gen++
	d.dead = true
}

// settle decides what of a file's unsynced writes a power cut keeps.
func (d *Disk) settle(ino *inode) {
	n := len(ino.pending)
	k := 0
	if d.opts.KeepUnsynced {
		k = d.rng.IntN(n + 1)
	}
	for _, w := range ino.pending[:k] {
		ino.durable = w.apply(ino.durable)
	}
	if d.opts.KeepUnsynced && k < n {
		if w := ino.pending[k]; !w.trunc && len(w.data) > 0 {
			kept := d.rng.IntN(len(w.data)) // 0..len-1 bytes made it
			torn := write{off: w.off, data: w.data[:kept]}
			if d.opts.TearZeros && d.rng.IntN(2) == 0 {
				torn.data = append(slices.Clone(w.data[:kept]), make([]byte, len(w.data)-kept)...)
			}
			ino.durable = torn.apply(ino.durable)
		}
	}
	ino.pending = nil
	ino.live = slices.Clone(ino.durable)
}

func applyNS(ns map[string]*inode, o nsOp) {
	switch o.kind {
	case "create":
		ns[o.path] = o.ino
	case "remove":
		if ns[o.path] == o.ino {
			delete(ns, o.path)
		}
	case "rename":
		if ns[o.path] == o.ino {
			delete(ns, o.path)
		}
		ns[o.to] = o.ino
	}
}

// tick counts a mutating operation on path: it cuts the power when due,
// and returns the error of a fault that matches. d.mu is held.
func (d *Disk) tick(op Op, path string) error {
	if d.dead {
		return ErrPowerCut
	}
	d.ops++
	if d.cutAt > 0 && d.ops >= d.cutAt {
		d.cut()
		return ErrPowerCut
	}
	return d.fault(op, path)
}

// fault returns the error of a fault matching op on path. d.mu is held.
func (d *Disk) fault(op Op, path string) error {
	for _, f := range d.faults {
		if f.Op != op || !strings.Contains(path, f.Path) {
			continue
		}
		f.seen++
		if f.seen == f.N || (f.Every && f.seen > f.N) {
			return f.Err
		}
	}
	return nil
}

// used is the bytes of every file in the namespace. d.mu is held.
func (d *Disk) used() int64 {
	var n int64
	seen := map[*inode]bool{}
	for _, ino := range d.live {
		if !seen[ino] {
			seen[ino] = true
			n += int64(len(ino.live))
		}
	}
	return n
}

func clean(name string) string { return filepath.Clean(name) }

func pathErr(op, path string, err error) error { return &fs.PathError{Op: op, Path: path, Err: err} }

// OpenFile implements vfs.FS.
func (d *Disk) OpenFile(name string, flag int, _ fs.FileMode) (vfs.File, error) {
	name = clean(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, pathErr("open", name, ErrPowerCut)
	}
	if err := d.fault(OpOpen, name); err != nil {
		return nil, pathErr("open", name, err)
	}
	if !d.dirs[filepath.Dir(name)] {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	if d.dirs[name] {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	ino, ok := d.live[name]
	switch {
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, fs.ErrNotExist)
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, fs.ErrExist)
	case !ok:
		if err := d.tick(OpOpen, name); err != nil {
			return nil, pathErr("open", name, err)
		}
		ino = &inode{}
		d.live[name] = ino
		d.pendingNS = append(d.pendingNS, nsOp{kind: "create", path: name, ino: ino})
	}
	writable := flag&(os.O_WRONLY|os.O_RDWR) != 0
	if ok && flag&os.O_TRUNC != 0 && writable {
		if err := d.tick(OpTruncate, name); err != nil {
			return nil, pathErr("open", name, err)
		}
		ino.live = ino.live[:0]
		ino.pending = append(ino.pending, write{trunc: true})
	}
	return &file{d: d, ino: ino, name: name, gen: d.gen, flag: flag, writable: writable,
		readable: flag&os.O_WRONLY == 0}, nil
}

// ReadDir implements vfs.FS.
func (d *Disk) ReadDir(name string) ([]fs.DirEntry, error) {
	name = clean(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, pathErr("readdir", name, ErrPowerCut)
	}
	if !d.dirs[name] {
		return nil, pathErr("readdir", name, fs.ErrNotExist)
	}
	var out []fs.DirEntry
	for p, ino := range d.live {
		if filepath.Dir(p) == name {
			out = append(out, info{name: filepath.Base(p), size: int64(len(ino.live))})
		}
	}
	for p := range d.dirs {
		if p != name && filepath.Dir(p) == name {
			out = append(out, info{name: filepath.Base(p), dir: true})
		}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Stat implements vfs.FS.
func (d *Disk) Stat(name string) (fs.FileInfo, error) {
	name = clean(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, pathErr("stat", name, ErrPowerCut)
	}
	if ino, ok := d.live[name]; ok {
		return info{name: filepath.Base(name), size: int64(len(ino.live))}, nil
	}
	if d.dirs[name] {
		return info{name: filepath.Base(name), dir: true}, nil
	}
	return nil, pathErr("stat", name, fs.ErrNotExist)
}

// Remove implements vfs.FS.
func (d *Disk) Remove(name string) error {
	name = clean(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	ino, ok := d.live[name]
	if !ok && !d.dead {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	if err := d.tick(OpRemove, name); err != nil {
		return pathErr("remove", name, err)
	}
	delete(d.live, name)
	d.pendingNS = append(d.pendingNS, nsOp{kind: "remove", path: name, ino: ino})
	return nil
}

// Rename implements vfs.FS.
func (d *Disk) Rename(oldpath, newpath string) error {
	oldpath, newpath = clean(oldpath), clean(newpath)
	d.mu.Lock()
	defer d.mu.Unlock()
	ino, ok := d.live[oldpath]
	if !ok && !d.dead {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrNotExist}
	}
	if !d.dirs[filepath.Dir(newpath)] && !d.dead {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrNotExist}
	}
	if err := d.tick(OpRename, oldpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	delete(d.live, oldpath)
	d.live[newpath] = ino
	d.pendingNS = append(d.pendingNS, nsOp{kind: "rename", path: oldpath, to: newpath, ino: ino})
	return nil
}

// MkdirAll implements vfs.FS. Directories are durable at once (see the
// package comment).
func (d *Disk) MkdirAll(name string, _ fs.FileMode) error {
	name = clean(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return pathErr("mkdir", name, ErrPowerCut)
	}
	for p := name; !d.dirs[p]; p = filepath.Dir(p) {
		if _, isFile := d.live[p]; isFile {
			return pathErr("mkdir", p, syscall.ENOTDIR)
		}
		d.dirs[p] = true
	}
	return nil
}

// SyncDir implements vfs.FS: the directory's pending changes, and every
// change before the last of them, become durable.
func (d *Disk) SyncDir(name string) error {
	name = clean(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dirs[name] && !d.dead {
		return pathErr("sync", name, fs.ErrNotExist)
	}
	if err := d.tick(OpSyncDir, name); err != nil {
		return pathErr("sync", name, err)
	}
	last := -1
	for i, o := range d.pendingNS {
		if o.touches(name) {
			last = i
		}
	}
	for _, o := range d.pendingNS[:last+1] {
		applyNS(d.durable, o)
	}
	d.pendingNS = slices.Delete(d.pendingNS, 0, last+1)
	return nil
}

// Lock implements vfs.FS: a lock held until closed or a power cut.
func (d *Disk) Lock(name string) (io.Closer, error) {
	name = clean(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, pathErr("lock", name, ErrPowerCut)
	}
	if d.locks[name] {
		return nil, fmt.Errorf("disk: lock %s: %w", name, vfs.ErrLocked)
	}
	d.locks[name] = true
	return &lock{d: d, name: name, gen: d.gen}, nil
}

type lock struct {
	d    *Disk
	name string
	gen  int
	once sync.Once
}

func (l *lock) Close() error {
	l.once.Do(func() {
		l.d.mu.Lock()
		defer l.d.mu.Unlock()
		if l.gen == l.d.gen {
			delete(l.d.locks, l.name)
		}
	})
	return nil
}

// Image is a copy of a disk's durable content: files by path and the
// directories.
type Image struct {
	Files map[string][]byte
	Dirs  []string
}

// Backup copies what a power cut now would keep for certain (the durable
// namespace and data, nothing unsynced).
func (d *Disk) Backup() Image {
	d.mu.Lock()
	defer d.mu.Unlock()
	img := Image{Files: map[string][]byte{}}
	for p, ino := range d.durable {
		img.Files[p] = slices.Clone(ino.durable)
	}
	for p := range d.dirs {
		img.Dirs = append(img.Dirs, p)
	}
	slices.Sort(img.Dirs)
	return img
}

// Restore replaces the disk's whole content with img, as a restore from a
// backup onto a stopped machine: handles opened before it die.
func (d *Disk) Restore(img Image) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.live, d.durable, d.pendingNS = map[string]*inode{}, map[string]*inode{}, nil
	for p, b := range img.Files {
		ino := &inode{live: slices.Clone(b), durable: slices.Clone(b)}
		d.live[p], d.durable[p] = ino, ino
	}
	d.dirs = map[string]bool{"/": true, ".": true}
	for _, p := range img.Dirs {
		d.dirs[p] = true
	}
	d.locks = map[string]bool{}
	d.gen++
	d.dead, d.cutAt = false, 0
}

// RemoveNewest deletes, durably, the last file of dir in name order whose
// name ends with suffix (a journal's newest segment), and returns its
// path ("" when there is none).
func (d *Disk) RemoveNewest(dir, suffix string) string {
	dir = clean(dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	var newest string
	for p := range d.live {
		if filepath.Dir(p) == dir && strings.HasSuffix(p, suffix) && p > newest {
			newest = p
		}
	}
	if newest != "" {
		delete(d.live, newest)
		delete(d.durable, newest)
	}
	return newest
}

// info is a FileInfo and a DirEntry.
type info struct {
	name string
	size int64
	dir  bool
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return i.size }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i info) ModTime() time.Time         { return time.Time{} }
func (i info) IsDir() bool                { return i.dir }
func (i info) Sys() any                   { return nil }
func (i info) Type() fs.FileMode          { return i.Mode().Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }

// file is an open handle.
type file struct {
	d                  *Disk
	ino                *inode
	name               string
	gen                int
	flag               int
	off                int64
	closed             bool
	writable, readable bool
}

var _ vfs.File = (*file)(nil)

// check returns why the handle cannot be used, nil when it can. d.mu is
// held.
func (f *file) check(op string) error {
	switch {
	case f.closed:
		return pathErr(op, f.name, os.ErrClosed)
	case f.gen != f.d.gen || f.d.dead:
		return pathErr(op, f.name, ErrPowerCut)
	}
	return nil
}

func (f *file) Name() string { return f.name }

func (f *file) Read(p []byte) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	n, err := f.readAt(p, f.off, "read")
	f.off += int64(n)
	return n, err
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	return f.readAt(p, off, "read")
}

func (f *file) readAt(p []byte, off int64, op string) (int, error) {
	if err := f.check(op); err != nil {
		return 0, err
	}
	if !f.readable {
		return 0, pathErr(op, f.name, syscall.EBADF)
	}
	if off >= int64(len(f.ino.live)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.live[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *file) Write(p []byte) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	off := f.off
	if f.flag&os.O_APPEND != 0 {
		off = int64(len(f.ino.live))
	}
	n, err := f.writeAt(p, off)
	f.off = off + int64(n)
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if f.flag&os.O_APPEND != 0 {
		return 0, errors.New("disk: WriteAt on a file opened with O_APPEND")
	}
	return f.writeAt(p, off)
}

func (f *file) writeAt(p []byte, off int64) (int, error) {
	if err := f.check("write"); err != nil {
		return 0, err
	}
	if !f.writable {
		return 0, pathErr("write", f.name, syscall.EBADF)
	}
	if err := f.d.tick(OpWrite, f.name); err != nil {
		return 0, pathErr("write", f.name, err)
	}
	n, full := len(p), false
	if c := f.d.opts.Capacity; c > 0 {
		grow := max(0, off+int64(len(p))-int64(len(f.ino.live)))
		if room := c - f.d.used(); grow > room {
			n, full = max(0, len(p)-int(grow-max(room, 0))), true
		}
	}
	if n > 0 {
		w := write{off: off, data: slices.Clone(p[:n])}
		f.ino.live = w.apply(f.ino.live)
		f.ino.pending = append(f.ino.pending, w)
	}
	if full {
		return n, pathErr("write", f.name, syscall.ENOSPC)
	}
	return n, nil
}

func (f *file) Seek(offset int64, whence int) (int64, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if err := f.check("seek"); err != nil {
		return 0, err
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += int64(len(f.ino.live))
	default:
		return 0, pathErr("seek", f.name, syscall.EINVAL)
	}
	if offset < 0 {
		return 0, pathErr("seek", f.name, syscall.EINVAL)
	}
	f.off = offset
	return offset, nil
}

// Sync makes the file's writes durable; a failed one loses them (see the
// package comment).
func (f *file) Sync() error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if err := f.check("sync"); err != nil {
		return err
	}
	if err := f.d.tick(OpSync, f.name); err != nil {
		if !errors.Is(err, ErrPowerCut) {
			f.ino.pending = nil // marked clean: never written
		}
		return pathErr("sync", f.name, err)
	}
	for _, w := range f.ino.pending {
		f.ino.durable = w.apply(f.ino.durable)
	}
	f.ino.pending = nil
	return nil
}

func (f *file) Truncate(size int64) error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if err := f.check("truncate"); err != nil {
		return err
	}
	if !f.writable {
		return pathErr("truncate", f.name, syscall.EBADF)
	}
	if err := f.d.tick(OpTruncate, f.name); err != nil {
		return pathErr("truncate", f.name, err)
	}
	w := write{trunc: true, size: size}
	f.ino.live = w.apply(f.ino.live)
	f.ino.pending = append(f.ino.pending, w)
	return nil
}

func (f *file) Stat() (fs.FileInfo, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if err := f.check("stat"); err != nil {
		return nil, err
	}
	return info{name: filepath.Base(f.name), size: int64(len(f.ino.live))}, nil
}

func (f *file) Close() error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, os.ErrClosed)
	}
	f.closed = true
	return nil
}
