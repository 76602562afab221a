// Command installcheck fails when a script could run a command that a fresh Debian machine does
// not have before anything installed it (`make verify` runs it).
//
// Every entry point a person or CI runs (.ci/run, each script under hack/, each Makefile target)
// is read with a real shell parser and walked in the order its commands appear, following what it
// sources, the functions and scripts it calls, the Makefile targets it makes and the commands the
// Go programs it runs with `go run` or `go test` start (exec.Command with a literal name). Each
// external command must be
//   - in a fresh Debian 12 machine of this project's kind (debian12-packages.txt, the package list
//     of that image), or
//   - installed earlier on the same path, by apt_ensure (hack/lib.sh) or apt-get install, or
//   - asked for with `command -v NAME` earlier in the same program (the script copes without it),
//   - or a prerequisite README.md names (package "-" in commands.txt: go, docker for
//     `make docker-build`).
//
// commands.txt maps each command the scripts run to the Debian package that provides it; a command
// it does not know fails the check, so a new command is looked up once, when it is first used.
//
// The walk is in textual order and takes every branch: an install inside an `if` counts for what
// follows it. Commands named through a variable ("$bin/kubectl") are built by the scripts and are
// not checked.
//
//	go run ./hack/installcheck [-root DIR]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

func main() {
	root := flag.String("root", ".", "the repository's top directory")
	packages := flag.Bool("packages", false, "print the Debian packages the scripts install that a fresh machine lacks, one a line, and exit")
	flag.Parse()
	if *packages {
		c, err := newChecker(*root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "installcheck:", err)
			os.Exit(2)
		}
		pkgs, err := c.installed()
		if err != nil {
			fmt.Fprintln(os.Stderr, "installcheck:", err)
			os.Exit(2)
		}
		for _, p := range pkgs {
			fmt.Println(p)
		}
		return
	}
	problems, err := check(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "installcheck:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("installcheck: %d command(s) may run before they are installed on a fresh Debian machine\n", len(problems))
		os.Exit(1)
	}
}

// newChecker reads the package lists and the Makefile under root.
func newChecker(root string) (*checker, error) {
	c := &checker{root: root, files: map[string]*syntax.File{}, seen: map[string]string{}, installs: map[string]bool{}}
	var err error
	if c.base, err = readSet(filepath.Join(root, "hack/installcheck/debian12-packages.txt")); err != nil {
		return nil, err
	}
	if c.pkgOf, err = readMap(filepath.Join(root, "hack/installcheck/commands.txt")); err != nil {
		return nil, err
	}
	if c.targets, err = readMakefile(filepath.Join(root, "Makefile")); err != nil {
		return nil, err
	}
	return c, nil
}

// installed walks every entry point and returns the packages the scripts install that a fresh
// machine does not have, sorted (hack/fresh-machine.sh purges them).
func (c *checker) installed() ([]string, error) {
	if _, err := c.walkAll(); err != nil {
		return nil, err
	}
	var out []string
	for p := range c.installs {
		if !c.base[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// check walks every entry point under root and returns one line per problem, sorted.
func check(root string) ([]string, error) {
	c, err := newChecker(root)
	if err != nil {
		return nil, err
	}
	return c.walkAll()
}

func (c *checker) walkAll() ([]string, error) {
	entries := []string{".ci/run"}
	err := filepath.WalkDir(filepath.Join(c.root, "hack"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sh") || filepath.Base(p) == "lib.sh" {
			return err
		}
		rel, _ := filepath.Rel(c.root, p)
		entries = append(entries, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if err := c.entry(e, func(r *run) error { return r.script(e, nil) }); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(c.targets))
	for t := range c.targets {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		if err := c.entry("make "+t, func(r *run) error { return r.make([]string{t}) }); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(c.seen))
	for _, p := range c.seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

type checker struct {
	root    string
	base    map[string]bool   // packages of a fresh machine
	pkgOf   map[string]string // command -> Debian package ("-": a prerequisite)
	targets map[string]target
	files   map[string]*syntax.File
	seen    map[string]string // problem key -> message, first entry wins
	// installs holds every package an install step names, on any path.
	installs map[string]bool
}

type target struct {
	prereqs []string
	recipe  string
}

// run is one walk from one entry point.
type run struct {
	c       *checker
	entry   string
	ensured map[string]bool // packages installed so far on this path
	stack   []string        // scripts, functions and targets being walked, for recursion
}

func (c *checker) entry(name string, walk func(*run) error) error {
	r := &run{c: c, entry: name, ensured: map[string]bool{}}
	return walk(r)
}

// scope is what one program (a script and what it sources) knows while it is walked.
type scope struct {
	file    string
	funcs   map[string]function
	arrays  map[string][]string
	loop    map[string][]string // for-loop variable -> its literal items
	guarded map[string]bool     // commands asked for with `command -v`
}

// function is a shell function and the file that defines it.
type function struct {
	decl *syntax.FuncDecl
	file string
}

func newScope(file string) *scope {
	return &scope{file: file, funcs: map[string]function{}, arrays: map[string][]string{}, loop: map[string][]string{}, guarded: map[string]bool{}}
}

func (r *run) enter(key string) bool {
	for _, s := range r.stack {
		if s == key {
			return false
		}
	}
	r.stack = append(r.stack, key)
	return true
}

func (r *run) leave() { r.stack = r.stack[:len(r.stack)-1] }

func (r *run) parse(rel string) (*syntax.File, error) {
	if f, ok := r.c.files[rel]; ok {
		return f, nil
	}
	src, err := os.ReadFile(filepath.Join(r.c.root, rel))
	if err != nil {
		return nil, err
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(string(src)), rel)
	if err != nil {
		return nil, err
	}
	r.c.files[rel] = f
	return f, nil
}

// script walks the script at rel as a program of its own (a new scope); sc, when set, is the
// scope of a script that sources it.
func (r *run) script(rel string, sc *scope) error {
	if !r.enter("script " + rel) {
		return nil
	}
	defer r.leave()
	f, err := r.parse(rel)
	if err != nil {
		return err
	}
	if sc == nil {
		sc = newScope(rel)
	}
	outer := sc.file
	sc.file = rel
	defer func() { sc.file = outer }()
	if err := r.declare(f, sc); err != nil {
		return err
	}
	return r.walk(f, sc)
}

// declare collects the functions and literal arrays of f and of what f sources, so that a call
// finds a function defined further down (bash needs it defined before the call runs, not before
// the call is written).
func (r *run) declare(f *syntax.File, sc *scope) error {
	var err error
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			if n.Name != nil {
				sc.funcs[n.Name.Value] = function{decl: n, file: sc.file}
			}
		case *syntax.Assign:
			if n.Name != nil && n.Array != nil {
				var items []string
				for _, e := range n.Array.Elems {
					if e.Value != nil {
						items = append(items, rough(e.Value))
					}
				}
				sc.arrays[n.Name.Value] = items
			}
		case *syntax.CallExpr:
			if len(n.Args) == 2 && (n.Args[0].Lit() == "source" || n.Args[0].Lit() == ".") {
				if p := r.resolve(rough(n.Args[1]), sc.file); p != "" {
					lib, e := r.parse(p)
					if e != nil {
						err = e
						return false
					}
					outer := sc.file
					sc.file = p
					e = r.declare(lib, sc)
					sc.file = outer
					if e != nil {
						err = e
					}
				}
			}
		}
		return err == nil
	})
	return err
}

// walk visits node's commands in order; a function's body is walked where it is called.
func (r *run) walk(node syntax.Node, sc *scope) error {
	var err error
	syntax.Walk(node, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.FuncDecl:
			return false
		case *syntax.ForClause:
			it, ok := n.Loop.(*syntax.WordIter)
			if !ok || it.Name == nil {
				return true
			}
			var items []string
			for _, w := range it.Items {
				// The words are expanded before the loop runs: $(...) in them runs first.
				if err = r.walk(w, sc); err != nil {
					return false
				}
				items = append(items, strings.Fields(rough(w))...)
			}
			outer, had := sc.loop[it.Name.Value]
			sc.loop[it.Name.Value] = items
			for _, st := range n.Do {
				if err = r.walk(st, sc); err != nil {
					break
				}
			}
			if had {
				sc.loop[it.Name.Value] = outer
			} else {
				delete(sc.loop, it.Name.Value)
			}
			return false
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			args := make([]string, len(n.Args))
			for i, w := range n.Args {
				args[i] = rough(w)
			}
			err = r.call(args, n.Args[0].Pos(), sc)
		}
		return true
	})
	return err
}

var builtins = map[string]bool{}

func init() {
	for _, b := range strings.Fields(`: . [ [[ alias bg break builtin caller cd command compgen complete continue
		declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs
		kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift
		shopt source suspend test times trap true type typeset ulimit umask unalias unset wait`) {
		builtins[b] = true
	}
}

// wrappers run their arguments as a command: how many of the arguments after the wrapper's own
// options are its parameters (timeout's duration), and which of its options take a value.
var wrappers = map[string]struct {
	params     int
	withValues string
}{
	"nohup": {}, "setsid": {}, "timeout": {1, "-k -s --kill-after --signal"}, "env": {0, "-u -C --unset --chdir"},
	"xargs": {0, "-n -I -P -L -s -d -E -a"}, "nice": {0, "-n --adjustment"},
}

// call looks at one simple command: its words, already roughly expanded.
func (r *run) call(args []string, pos syntax.Pos, sc *scope) error {
	name := args[0]
	switch {
	case name == "source" || name == ".":
		if len(args) > 1 {
			if p := r.resolve(args[1], sc.file); p != "" {
				return r.script(p, sc)
			}
		}
		return nil
	case name == "command" && len(args) > 2 && args[1] == "-v":
		sc.guarded[args[2]] = true
		return nil
	case name == "exec" && len(args) > 1:
		return r.call(args[1:], pos, sc)
	case name == "apt_ensure":
		for _, a := range args[1:] {
			for _, p := range r.expand(a, sc) {
				r.ensured[p] = true
				r.c.installs[p] = true
			}
		}
		return nil
	case name == "apt-get" && slices.Contains(args, "install"):
		r.use("apt-get", pos, sc)
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") && a != "install" {
				r.ensured[a] = true
				r.c.installs[a] = true
			}
		}
		return nil
	}
	if fn, ok := sc.funcs[name]; ok {
		// A function that runs its arguments, after those it shifts off, as a command ("$@":
		// phase, step, once).
		if n, ok := runsArgs(fn.decl); ok && len(args) > 1+n {
			if err := r.call(args[1+n:], pos, sc); err != nil {
				return err
			}
		}
		if !r.enter("func " + fn.file + " " + name) {
			return nil
		}
		defer r.leave()
		outer := sc.file
		sc.file = fn.file
		defer func() { sc.file = outer }()
		return r.walk(fn.decl.Body, sc)
	}
	if w, ok := wrappers[name]; ok {
		r.use(name, pos, sc)
		rest := args[1:]
		for len(rest) > 0 && (strings.HasPrefix(rest[0], "-") || strings.Contains(rest[0], "=")) {
			if slices.Contains(strings.Fields(w.withValues), rest[0]) && len(rest) > 1 {
				rest = rest[1:]
			}
			rest = rest[1:]
		}
		if len(rest) > w.params {
			return r.call(rest[w.params:], pos, sc)
		}
		return nil
	}
	if scripts := r.scripts(name, sc); len(scripts) > 0 {
		for _, p := range scripts {
			if err := r.script(p, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if strings.Contains(name, "$") || builtins[name] {
		// Built by the scripts (a path in a variable), or the shell's own.
		if name == "$MAKE" || name == "$(MAKE)" {
			return r.make(args[1:])
		}
		return nil
	}
	if name == "make" {
		return r.make(args[1:])
	}
	r.use(name, pos, sc)
	if name == "go" {
		return r.goPrograms(args[1:], pos, sc)
	}
	return nil
}

// runsArgs says whether a function runs its arguments as a command ("$@" or "${@:K}" in command
// position) and how many of them come first and are not part of it: the shifts before it, or K-1.
func runsArgs(fn *syntax.FuncDecl) (int, bool) {
	shifted, found := 0, false
	syntax.Walk(fn.Body, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 || found {
			return !found
		}
		switch w := rough(c.Args[0]); {
		case w == "shift":
			k := 1
			if len(c.Args) > 1 {
				if v, err := strconv.Atoi(c.Args[1].Lit()); err == nil {
					k = v
				}
			}
			shifted += k
		case w == "$@":
			found = true
		case strings.HasPrefix(w, "${@:"):
			if v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(w, "${@:"), "}")); err == nil {
				shifted, found = v-1, true
			}
		}
		return !found
	})
	return shifted, found
}

// use checks that an external command is on the machine at this point of the path.
func (r *run) use(name string, pos syntax.Pos, sc *scope) {
	cmd := filepath.Base(name)
	where := fmt.Sprintf("%s:%d", sc.file, pos.Line())
	pkg, known := r.c.pkgOf[cmd]
	switch {
	case !known:
		r.problem(where+" "+cmd, fmt.Sprintf("%s: %s is not in hack/installcheck/commands.txt: add the Debian package that provides it (reached from %s)", where, cmd, r.entry))
	case pkg == "-" || r.c.base[pkg] || r.ensured[pkg] || sc.guarded[cmd]:
	default:
		r.problem(where+" "+cmd, fmt.Sprintf("%s: %s (Debian package %s) runs before anything installs it, reached from %s; apt_ensure %s first", where, cmd, pkg, r.entry, pkg))
	}
}

func (r *run) problem(key, msg string) {
	if _, ok := r.c.seen[key]; !ok {
		r.c.seen[key] = msg
	}
}

// expand turns "${NAME[@]}" into the items of the literal array NAME; other words stay as they are.
func (r *run) expand(word string, sc *scope) []string {
	if m := arrayRef.FindStringSubmatch(word); m != nil {
		return sc.arrays[m[1]]
	}
	return []string{word}
}

var arrayRef = regexp.MustCompile(`^\$\{(\w+)\[@\]\}$`)

// scripts resolves a command word to the scripts it runs: a path to a .sh file of this
// repository, with a for-loop's variable expanded to each of its items.
func (r *run) scripts(word string, sc *scope) []string {
	words := []string{word}
	for v, items := range sc.loop {
		ref := "$" + v
		if !strings.Contains(word, ref) {
			continue
		}
		words = nil
		for _, it := range items {
			words = append(words, strings.ReplaceAll(word, ref, it))
		}
	}
	var out []string
	for _, w := range words {
		if p := r.resolve(w, sc.file); p != "" && strings.HasSuffix(p, ".sh") {
			out = append(out, p)
		}
	}
	return out
}

// resolve turns a path as a script writes it into a path relative to the root, or "".
func (r *run) resolve(word, from string) string {
	dir := filepath.Dir(from)
	var p string
	switch {
	case strings.HasPrefix(word, `$(dirname "$0")/`):
		p = filepath.Join(dir, strings.TrimPrefix(word, `$(dirname "$0")/`))
	case strings.HasPrefix(word, `$(dirname "${BASH_SOURCE[0]}")/`):
		p = filepath.Join(dir, strings.TrimPrefix(word, `$(dirname "${BASH_SOURCE[0]}")/`))
	case strings.HasPrefix(word, "$root/"):
		p = strings.TrimPrefix(word, "$root/")
	case strings.HasPrefix(word, "hack/") || strings.HasPrefix(word, ".ci/"):
		p = word
	default:
		return ""
	}
	if strings.Contains(p, "$") {
		return ""
	}
	if _, err := os.Stat(filepath.Join(r.c.root, p)); err != nil {
		return ""
	}
	return filepath.Clean(p)
}

// make walks the recipes of the targets a `make` command line names (the default goal when none),
// each after its prerequisites.
func (r *run) make(args []string) error {
	var goals []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || strings.Contains(a, "=") || strings.Contains(a, "$") {
			continue
		}
		goals = append(goals, a)
	}
	if len(goals) == 0 {
		goals = []string{"help"}
	}
	for _, g := range goals {
		t, ok := r.c.targets[g]
		if !ok || !r.enter("make "+g) {
			continue
		}
		if err := r.make(t.prereqs); err != nil {
			return err
		}
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(t.recipe), "Makefile:"+g)
		if err != nil {
			return fmt.Errorf("the Makefile's target %s: %w", g, err)
		}
		sc := newScope("Makefile (" + g + ")")
		err = r.walk(f, sc)
		r.leave()
		if err != nil {
			return err
		}
	}
	return nil
}

// execName matches a call of exec.Command with a literal name, or of exec.CommandContext with one
// after its context.
var execName = regexp.MustCompile(`exec\.Command\("([^"/]+)"|exec\.CommandContext\(\w+,\s*"([^"/]+)"`)

// goPrograms follows `go run` and `go test` of this repository's packages (not ./...) into the
// commands their Go code starts by a literal name.
func (r *run) goPrograms(args []string, pos syntax.Pos, sc *scope) error {
	if len(args) == 0 || (args[0] != "run" && args[0] != "test") {
		return nil
	}
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "./") || strings.HasSuffix(a, "...") {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(r.c.root, a, "*.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			for _, m := range execName.FindAllStringSubmatch(string(src), -1) {
				r.use(m[1]+m[2], pos, sc)
			}
		}
	}
	return nil
}

// rough renders a word as the script wrote it, quotes removed, expansions kept as $name or
// $(...) text: enough to recognise commands, paths and package names.
func rough(w *syntax.Word) string {
	var b strings.Builder
	var part func(p syntax.WordPart)
	part = func(p syntax.WordPart) {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				part(q)
			}
		case *syntax.ParamExp:
			if p.Param == nil {
				b.WriteString("$?")
				return
			}
			if p.Short {
				b.WriteString("$" + p.Param.Value)
				return
			}
			b.WriteString(printed(p))
		default:
			b.WriteString(printed(p))
		}
	}
	for _, p := range w.Parts {
		part(p)
	}
	s := b.String()
	// ${name} alone reads as $name, so that loops and "$root/..." resolve either way.
	return braced.ReplaceAllString(s, "$$$1")
}

// printed is a node as the shell would have it written; a node the printer refuses reads as "$?",
// a word no command is named by.
func printed(n syntax.Node) string {
	var s strings.Builder
	if err := syntax.NewPrinter().Print(&s, n); err != nil {
		return "$?"
	}
	return s.String()
}

var braced = regexp.MustCompile(`\$\{(\w+)\}`)

// readSet reads the first word of each line that is not a comment.
func readSet(path string) (map[string]bool, error) {
	m, err := readLines(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range m {
		out[strings.Fields(l)[0]] = true
	}
	return out, nil
}

// readMap reads "command package" lines.
func readMap(path string) (map[string]string, error) {
	m, err := readLines(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range m {
		f := strings.Fields(l)
		if len(f) < 2 {
			return nil, fmt.Errorf("%s: %q: want a command and its package", path, l)
		}
		out[f[0]] = f[1]
	}
	return out, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, s.Err()
}

var ruleLine = regexp.MustCompile(`^([a-zA-Z0-9_-]+):([^=]*)$`)

// makeExpand replaces make's $(NAME) with make for MAKE and $NAME for other variables, and each
// call of a make function ($(if ...), $(shell ...)) with $MAKEFN: a word the walk skips.
func makeExpand(line string) string {
	var b strings.Builder
	for {
		i := strings.Index(line, "$(")
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		b.WriteString(line[:i])
		depth, j := 0, i+1
		for ; j < len(line); j++ {
			if line[j] == '(' {
				depth++
			} else if line[j] == ')' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		if j >= len(line) {
			b.WriteString(line[i:])
			return b.String()
		}
		switch inner := line[i+2 : j]; {
		case inner == "MAKE":
			b.WriteString("make")
		case simpleName.MatchString(inner):
			b.WriteString("$" + inner)
		default:
			b.WriteString("$MAKEFN")
		}
		line = line[j+1:]
	}
}

var simpleName = regexp.MustCompile(`^\w+$`)

// readMakefile reads each rule's prerequisites and recipe, with make's own expansion reduced to
// what a shell parser can read: $$ is $, $(MAKE) is make, other variables stay variables.
func readMakefile(path string) (map[string]target, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]target{}
	var cur string
	var recipe strings.Builder
	flush := func() {
		if cur != "" {
			t := out[cur]
			t.recipe = recipe.String()
			out[cur] = t
		}
		recipe.Reset()
	}
	lines := strings.Split(string(src), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "\t") {
			if cur == "" {
				continue
			}
			line := strings.TrimPrefix(l, "\t")
			for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
				i++
				line = strings.TrimSuffix(line, `\`) + " " + strings.TrimLeft(lines[i], "\t ")
			}
			line = strings.TrimLeft(line, "@-+")
			line = strings.ReplaceAll(line, "$$", "\x00")
			recipe.WriteString(strings.ReplaceAll(makeExpand(line), "\x00", "$") + "\n")
			continue
		}
		body, _, _ := strings.Cut(l, "##")
		if m := ruleLine.FindStringSubmatch(strings.TrimSpace(body)); m != nil && !strings.HasPrefix(l, ".") {
			flush()
			cur = m[1]
			out[cur] = target{prereqs: strings.Fields(m[2])}
			continue
		}
		if l != "" && !strings.HasPrefix(l, "#") {
			flush()
			cur = ""
		}
	}
	flush()
	return out, nil
}
