#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernel-doc of the headers of src/, as libnvme documents its own.

usage: check-kernel-doc.py SRC_DIR

Every header under SRC_DIR (src/core, src/quirks, src/watch) is read, and:

- every function declared in it (a prototype, or a static inline
  function) has the kernel-doc block right above it: "/**", a first line
  "name() - summary", one "@arg:" line per named parameter;
- every struct defined in it has the block right above it: "struct name -
  summary" and one "@member:" line per member (a member of an anonymous
  struct or union inside it as "@member:" or "@outer.member:"; a nested
  named struct's members are that struct's own business).

Macro-generated prototypes (cli.h's VWC_VERBS() expansion) are not seen.
Output is TAP, one check per header; a header's faults are listed under
its "not ok" line.
"""
import os
import re
import sys

def blank(text):
    """Comments and preprocessor lines blanked, offsets and lines kept."""
    def keep_lines(m):
        return re.sub(r'[^\n]', ' ', m.group(0))
    text = re.sub(r'/\*.*?\*/', keep_lines, text, flags=re.S)
    text = re.sub(r'//[^\n]*', keep_lines, text)
    # a macro expanded at file scope, a line of its own without a ";"
    # (cli.h: VWC_VERBS(VWC_CLI_PROTO))
    text = re.sub(r'^[ \t]*[A-Z][A-Z0-9_]*\([^;{}\n]*\)[ \t]*$', keep_lines,
                  text, flags=re.M)
    # preprocessor lines, with their continuations
    text = re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', keep_lines, text,
                  flags=re.M)
    return text


def doc_above(raw, pos):
    """The /** block that ends right above offset pos (blanks between)."""
    head = raw[:pos].rstrip()
    if not head.endswith('*/'):
        return None
    start = head.rfind('/*')
    if start < 0 or not head.startswith('/**', start):
        return None
    return head[start:]


def doc_lines(block):
    out = []
    for line in block.split('\n'):
        line = line.strip()
        line = re.sub(r'^/\*\*', '', line)
        line = re.sub(r'\*/$', '', line)
        line = re.sub(r'^\*', '', line).strip()
        out.append(line)
    return out


def doc_title(lines):
    for l in lines:
        if l:
            return l
    return ''


def doc_args(block):
    return set(re.findall(r'^\s*\*?\s*@([\w.]+|\.\.\.)\s*:', block, re.M))


def split_top(s, sep):
    """s split at sep outside parentheses, brackets and braces."""
    parts, depth, cur = [], 0, ''
    for ch in s:
        if ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    parts.append(cur)
    return parts


def declarator_name(decl):
    """The name a declaration declares: int (*fn)(int) -> fn, char a[3] -> a."""
    decl = re.sub(r'__attribute__\s*\(\(.*?\)\)', '', decl)
    decl = re.sub(r':\s*\d+\s*$', '', decl.strip())   # bit-field
    m = re.search(r'\(\s*\*\s*(\w+)\s*\)', decl)      # pointer to function
    if m:
        return m.group(1)
    decl = re.sub(r'(\[[^\]]*\])+\s*$', '', decl).strip()
    m = re.search(r'(\w+)\s*$', decl)
    return m.group(1) if m else None


def params(plist):
    names = []
    plist = plist.strip()
    if plist in ('', 'void'):
        return names
    for p in split_top(plist, ','):
        p = p.strip()
        if p == '...':
            names.append('...')
            continue
        n = declarator_name(p)
        # a parameter without a name (a type alone) needs no @line
        if n and n not in ('void', 'char', 'int', 'long', 'short', 'bool',
                           'double', 'float', 'unsigned', 'size_t') \
           and not re.fullmatch(r'(const\s+)?(struct|enum|union)\s+\w+\s*\**', p):
            names.append(n)
    return names


def members(body, prefix=''):
    """Member names of a struct body: (name, alternatives)."""
    out = []
    body = body.strip()
    stmts = []
    depth, cur = 0, ''
    for ch in body:
        cur += ch
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
        elif ch == ';' and depth == 0:
            stmts.append(cur.strip())
            cur = ''
    for st in stmts:
        st = st.rstrip(';').strip()
        if not st:
            continue
        m = re.match(r'(struct|union)\s*(\w*)\s*\{(.*)\}\s*([^{}]*)$', st, re.S)
        if m:
            inner, after = m.group(3), m.group(4).strip()
            if after:
                # a named member of a nested struct/union type
                for d in split_top(after, ','):
                    n = declarator_name(d)
                    if n:
                        out.append((n, {n}))
            else:
                # anonymous: its members are the outer struct's
                for n, alts in members(inner):
                    out.append((n, alts))
            continue
        for d in split_top(st, ','):
            n = declarator_name(d)
            if n:
                out.append((n, {n}))
    return out


def check_header(path, seen):
    raw = open(path).read()
    text = blank(raw)
    faults = []
    seen['names'] = set()
    # top-level statements
    depth = 0
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                # end of a top-level braced thing: a struct definition
                # (ends at ';') or a function body (ends here)
                stmt = text[start:i + 1]
                if re.search(r'\)\s*$', stmt[:stmt.find('{')]) and \
                   not re.match(r'\s*(typedef\s+)?(struct|union|enum)\b', stmt):
                    handle(raw, text, start, stmt, faults, path, seen)
                    start = i + 1
        elif ch == ';' and depth == 0:
            handle(raw, text, start, text[start:i + 1], faults, path, seen)
            start = i + 1
        i += 1
    fns, structs = line_scan(text)
    for name in sorted((fns | structs) - seen['names']):
        faults.append('%s: %s is declared but the check did not read it'
                      % (os.path.basename(path), name))
    return faults


def line_scan(text):
    """A second, cruder count of what a header declares, independent of the
    parser above: the names of lines that open a function declaration or a
    struct definition. A name found here and not by the parser is a
    declaration the check would otherwise pass over in silence."""
    fns = set(re.findall(r'^(?!typedef\b)(?:static\s+inline\s+)?'
                         r'[A-Za-z_][\w \t*]*?\b(\w+)\s*\(', text, re.M))
    fns = {f for f in fns if not re.fullmatch(r'[A-Z][A-Z0-9_]*', f)}
    structs = set(re.findall(r'^(?:typedef\s+)?struct\s+(\w+)\s*\{', text,
                             re.M))
    return fns, structs


def lineno(raw, pos):
    return raw.count('\n', 0, pos) + 1


def doc_of(raw, pos, where, what, title_re, faults):
    """The @names of the block above pos, if its title is what title_re
    wants; else None, with the fault added."""
    block = doc_above(raw, pos)
    if block is None:
        faults.append('%s: %s has no kernel-doc block above it' % (where, what))
        return None
    title = doc_title(doc_lines(block))
    if not re.match(title_re, title):
        faults.append("%s: %s: the block above it is '%s', not '%s - ...'"
                      % (where, what, title[:60], what))
        return None
    return doc_args(block)


def handle(raw, text, start, stmt, faults, path, seen):
    lead = len(stmt) - len(stmt.lstrip())
    pos = start + lead
    s = stmt.strip()
    if not s:
        return
    where = '%s:%d' % (os.path.basename(path), lineno(raw, pos))
    # struct definitions (typedef'd or not)
    m = re.match(r'(typedef\s+)?struct\s+(\w+)\s*\{', s)
    if m:
        name = m.group(2)
        seen['structs'] += 1
        seen['names'].add(name)
        body = s[s.find('{') + 1:s.rfind('}')]
        have = doc_of(raw, pos, where, 'struct ' + name,
                      r'struct\s+%s\s+-\s+\S' % re.escape(name), faults)
        if have is None:
            return
        for mem, alts in members(body):
            if not (alts & have) and not any(h.endswith('.' + mem) for h in have):
                faults.append('%s: struct %s: member %s has no @%s: line'
                              % (where, name, mem, mem))
        return
    # not functions: typedefs, declarations of a struct, enum or union
    # type, enum and union definitions, variables
    if re.match(r'(typedef\b|(struct|enum|union)\s+\w+\s*;|(enum|union)\s*\w*\s*\{|'
                r'extern\s+[^(]*;|static\s+const\b)', s):
        return
    # a function: NAME ( PARAMS ) [attributes] ; or { body }
    head = s.split('{', 1)[0]
    m = re.match(r'(.*?)\b(\w+)\s*\((.*)\)\s*(__attribute__\s*\(\(.*\)\)\s*)*;?\s*$', head, re.S)
    # not a function: a pointer to one, "int (*fn)(void);"
    if not m or re.match(r'[^(]*\(\s*\*', head):
        return
    name, plist = m.group(2), m.group(3)
    # a macro expanded at file scope (cli.h: VWC_VERBS(VWC_CLI_PROTO))
    if name == '__attribute__' or re.fullmatch(r'[A-Z][A-Z0-9_]*', name):
        return
    seen['functions'] += 1
    seen['names'].add(name)
    have = doc_of(raw, pos, where, name + '()',
                  r'%s\(\)\s+-\s+\S' % re.escape(name), faults)
    if have is None:
        return
    for p in params(plist):
        if p not in have:
            faults.append('%s: %s(): parameter %s has no @%s: line' % (where, name, p, p))


def main():
    top = sys.argv[1]
    headers = []
    for d, _, files in os.walk(top):
        headers += [os.path.join(d, f) for f in files if f.endswith('.h')]
    headers.sort()
    if not headers:
        print('Bail out! no header under %s' % top)
        return 1
    print('1..%d' % (len(headers) + 1))
    total = 0
    for i, h in enumerate(headers, 1):
        rel = os.path.relpath(h, os.path.dirname(os.path.abspath(top)))
        seen = {'functions': 0, 'structs': 0}
        faults = check_header(h, seen)
        total += seen['functions']
        what = '%s: kernel-doc of its %d functions and %d structs' % (
            rel, seen['functions'], seen['structs'])
        if faults:
            print('not ok %d - %s' % (i, what))
            for f in faults:
                print('#   ' + f)
        else:
            print('ok %d - %s' % (i, what))
    # a floor: the headers of src/ declare far more than this; a parser
    # that stopped seeing declarations would otherwise pass every header
    floor = 150
    print('%s %d - %d functions read in all, at least %d expected'
          % ('ok' if total >= floor else 'not ok', len(headers) + 1, total,
             floor))
    return 0


if __name__ == '__main__':
    sys.exit(main())
