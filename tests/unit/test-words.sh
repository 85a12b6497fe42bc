#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Words of the project's history do not come back: no tracked file (its
# text or its name) refers to a source document by number ("seed" and
# three digits), to a tracker item by number ("issue 21", "issues 4 and
# 15", "issue15-..."), or to a working session. A reader meets what the
# thing is instead: the kernel patch's title, what a case proves, the
# commit a figure was measured on. TAP.
# Not read: this file (it names the words), debian/changelog (the
# package's own history), and the commands kept in bench/results/ (from a
# command's VAR=value words and "bash X.sh", "sh X.sh" or "bench/run.sh"
# to the end of its line), which stay as they were run.
# Outside a git work tree (a release tarball) there is no list of tracked
# files: skipped.
# Usage: test-words.sh SOURCE-ROOT
ROOT=${1:?usage: test-words.sh SOURCE-ROOT}
top=$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null)
if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$ROOT" && pwd -P)" ]; then
	echo "1..0 # SKIP $ROOT is not a git work tree"
	exit 0
fi
cd "$ROOT" || exit 1

git ls-files -z | perl -0 -e '
	my $seed = qr/\bseeds?[\s#*\/"\x27-]*\d{3}\b/i;
	my $issue = qr/\bissues?[\s#*\/-]*#?\d+/i;
	my $session = qr/\bsessions?\b/i;
	my (@text, @names);
	while (my $f = <STDIN>) {
		chomp $f;
		next if $f eq "tests/unit/test-words.sh" || $f eq "debian/changelog";
		push @names, $f if $f =~ /$seed|$issue|$session/;
		next unless -f $f && open(my $fh, "<", $f);
		local $/;
		my $s = <$fh>;
		close $fh;
		next if $s =~ /\0/;	# binary
		# bench/results: a command, from its environment assignments
		# to the end of its line, stays as it was run
		$s =~ s/(?:\b[A-Z_][A-Z0-9_]*=\S*[ \t]+)*(?:\b(?:ba)?sh[ \t]+\S+\.sh|\bbench\/run\.sh)\b.*$//mg
			if $f =~ m{^bench/results/};
		while ($s =~ /($seed|$issue|$session)/g) {
			my $at = $-[0];
			my $line = 1 + (substr($s, 0, $at) =~ tr/\n//);
			(my $what = $1) =~ s/\s+/ /g;
			push @text, "$f:$line: $what";
		}
	}
	my $n = 0;
	for ([\@text, "no tracked file names a seed, an issue number or a session"],
	     [\@names, "no tracked file is named after one"]) {
		my ($hits, $name) = @$_;
		$n++;
		if (@$hits) {
			print "not ok $n - $name\n";
			print "# $_\n" for @$hits;
		} else {
			print "ok $n - $name\n";
		}
	}
	print "1..$n\n";
	exit((@text || @names) ? 1 : 0);
'
