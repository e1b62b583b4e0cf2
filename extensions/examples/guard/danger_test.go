package main

import "testing"

func TestDanger(t *testing.T) {
	for _, c := range []struct {
		command, pattern string
	}{
		{"rm -rf /", "rm -rf"},
		{"cd /tmp && rm -rf build", "rm -rf"},
		{"rm -fr build", "rm -rf"},
		{"rm -r -f build", "rm -rf"},
		{"/bin/rm -Rf build", "rm -rf"},
		{"rm --recursive --force build", "rm -rf"},
		{"find . -name '*.o' | xargs rm -rf", "rm -rf"},
		{"echo 'rm -rf' is bad", "rm -rf"}, // contains the pattern
		{"sudo ls", "sudo"},
		{"  sudo -u root id", "sudo"},
		{"echo pw | sudo -S tee /etc/x", "sudo"},
		{"make && sudo make install", "sudo"},
		{"env X=1 sudo id", "sudo"},
		{"/usr/bin/sudo id", "sudo"},
		{"$(sudo cat /etc/shadow)", "sudo"},
		{"ls -la", ""},
		{"rm file.txt", ""},
		{"rm -r dir", ""},
		{"rm -f file", ""},
		{"grep -rf patterns.txt .", ""},
		{"echo sudo", ""},
		{"git commit -m 'no sudo here'", ""},
		{"visudo-check --help", ""},
		{"", ""},
	} {
		pattern, blocked := danger(c.command)
		if blocked != (c.pattern != "") || pattern != c.pattern {
			t.Errorf("danger(%q) = %q, %v; want %q", c.command, pattern, blocked, c.pattern)
		}
	}
}
