package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files (path -> content) under a new root, with the package lists the check reads.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{
		"hack/installcheck/debian12-packages.txt": "coreutils\ngrep\n",
		"hack/installcheck/commands.txt":          "cat coreutils\ndirname coreutils\ntimeout coreutils\nmkdir coreutils\ngrep grep\niptables iptables\nctr containerd\ngo -\n",
		"Makefile":                                "",
		".ci/run":                                 "#!/usr/bin/env bash\n",
		"hack/lib.sh":                             "apt_ensure() { :; }\nphase() { local n=$1; shift; \"$@\"; }\n",
	}
	for p, c := range files {
		all[p] = c
	}
	for p, c := range all {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const header = "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/lib.sh\"\n"

func TestCheck(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string // substrings, one problem each, in sorted order; none: no problem
	}{
		{
			name:  "a fresh machine's command needs nothing",
			files: map[string]string{"hack/a.sh": header + "cat /etc/os-release | grep -c ID\n"},
		},
		{
			name:  "used before it is installed",
			files: map[string]string{"hack/a.sh": header + "iptables -L\napt_ensure iptables\n"},
			want:  []string{"hack/a.sh:3: iptables (Debian package iptables) runs before anything installs it, reached from hack/a.sh"},
		},
		{
			name:  "installed first",
			files: map[string]string{"hack/a.sh": header + "apt_ensure iptables\niptables -L\n"},
		},
		{
			name: "installed through a literal array",
			files: map[string]string{"hack/a.sh": header + "PKGS=(curl iptables)\ninstall() { apt_ensure \"${PKGS[@]}\"; }\n" +
				"main() { install; iptables -L; }\nmain\n"},
		},
		{
			name:  "a function defined below and called before the install",
			files: map[string]string{"hack/a.sh": header + "main() { rules; apt_ensure iptables; }\nrules() { iptables -L; }\nmain \"$@\"\n"},
			want:  []string{"hack/a.sh:4: iptables"},
		},
		{
			name: "another script installs it first",
			files: map[string]string{
				"hack/a.sh": header + "\"$(dirname \"$0\")/b.sh\"\niptables -L\n",
				"hack/b.sh": header + "apt_ensure iptables\n",
			},
		},
		{
			name: "a for loop's scripts, in order",
			files: map[string]string{
				"hack/a.sh": header + "for s in b.sh \"c.sh arg\"; do hack/$s; done\n",
				"hack/b.sh": header + "ctr version\n",
				"hack/c.sh": header + "apt_ensure containerd\n",
			},
			want: []string{"hack/b.sh:3: ctr (Debian package containerd) runs before anything installs it, reached from hack/a.sh"},
		},
		{
			name:  "asked for with command -v",
			files: map[string]string{"hack/a.sh": header + "command -v iptables >/dev/null || exit 0\niptables -L\n"},
		},
		{
			name:  "a command the table does not know",
			files: map[string]string{"hack/a.sh": header + "frobnicate --all\n"},
			want:  []string{"hack/a.sh:3: frobnicate is not in hack/installcheck/commands.txt"},
		},
		{
			name:  "run through a function that runs its arguments, and a wrapper",
			files: map[string]string{"hack/a.sh": header + "phase \"rules\" timeout 5 iptables -L\n"},
			want:  []string{"hack/a.sh:3: iptables"},
		},
		{
			name:  "a for loop's words run before its body",
			files: map[string]string{"hack/a.sh": header + "for c in $(iptables -S); do echo \"$c\"; done\n"},
			want:  []string{"hack/a.sh:3: iptables"},
		},
		{
			name: "command -v counts in its own program only",
			files: map[string]string{
				"hack/a.sh": header + "\"$(dirname \"$0\")/b.sh\"\niptables -L\n",
				"hack/b.sh": header + "command -v iptables >/dev/null || exit 0\niptables -L\n",
			},
			want: []string{"hack/a.sh:4: iptables"},
		},
		{
			name:  "a command a function runs after the arguments it shifts off, known or not",
			files: map[string]string{"hack/a.sh": header + "phase \"make it\" frobnicate --all\n"},
			want:  []string{"hack/a.sh:3: frobnicate is not in"},
		},
		{
			name:  "a wrapper's option that takes a value",
			files: map[string]string{"hack/a.sh": header + "timeout -k 5 10 iptables -L\n"},
			want:  []string{"hack/a.sh:3: iptables"},
		},
		{
			name: "a library function's command is reported where the library has it",
			files: map[string]string{
				"hack/lib.sh": "apt_ensure() { :; }\nrules() {\n  iptables -L\n}\n",
				"hack/a.sh":   header + "rules\n",
			},
			want: []string{"hack/lib.sh:3: iptables"},
		},
		{
			name: "a Makefile target, its prerequisite and make in a recipe",
			files: map[string]string{
				"Makefile": "all: prep ## everything\n\t@$(MAKE) --no-print-directory rules X=$(Y)\n\nprep:\n\tapt_ensure nothing\n\nrules:\n\tiptables -L $$HOME $(if $(Z),-v)\n",
			},
			want: []string{"Makefile (rules):1: iptables (Debian package iptables) runs before anything installs it, reached from make all"},
		},
		{
			name: "a command a Go program run by the script starts",
			files: map[string]string{
				"hack/a.sh":         header + "go run ./hack/prog\n",
				"hack/prog/main.go": "package main\n\nimport \"os/exec\"\n\nfunc main() { _ = exec.Command(\"ctr\", \"version\").Run() }\n",
			},
			want: []string{"hack/a.sh:3: ctr"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := check(tree(t, tc.files))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// The repository itself passes: what `make verify` runs.
func TestRepository(t *testing.T) {
	got, err := check("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("%d problem(s):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// What hack/fresh-machine.sh purges: every package an install step names, but a fresh machine's.
func TestInstalled(t *testing.T) {
	root := tree(t, map[string]string{
		"hack/a.sh": header + "PKGS=(containerd coreutils)\napt_ensure iptables grep\n",
		"hack/b.sh": header + "apt_ensure \"${PKGS[@]}\"\nPKGS=(runc)\napt-get install -y -qq make\n",
		"hack/c.sh": header + "PKGS=(containerd coreutils)\napt_ensure \"${PKGS[@]}\"\n",
	})
	c, err := newChecker(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.installed()
	if err != nil {
		t.Fatal(err)
	}
	if want := "containerd iptables make runc"; strings.Join(got, " ") != want {
		t.Errorf("installed() = %q, want %q", strings.Join(got, " "), want)
	}
}
