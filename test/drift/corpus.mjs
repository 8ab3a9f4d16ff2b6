/**
 * The drift corpus: edits as models send them, with the anchor drifted from the file the way
 * models drift (quotes, blanks, indentation, line endings, blank lines, the final newline), and
 * anchors that must be refused (elided code, near-miss identifiers, ambiguity). Each case has the
 * exact file expected afterwards, or the refusal. Shared by test/drift/corpus.test.ts and
 * bench/cases-drift.mjs.
 *
 * What "expected" means for a tolerant match: the lines the model changed are its newText
 * (re-indented into the file's style); the anchor lines it repeated unchanged keep the file's
 * bytes; nothing outside the matched lines changes.
 */

/** `file` with its one occurrence of `from` replaced by `to`; throws unless `from` is unique. */
function R(file, from, to) {
	const at = file.indexOf(from);
	if (at === -1 || file.indexOf(from, at + 1) !== -1)
		throw new Error(`corpus: ${JSON.stringify(from)} is not unique`);
	return file.slice(0, at) + to + file.slice(at + from.length);
}

const one = (oldText, newText) => [{ oldText, newText }];

/** @type {import("./corpus.d.mts").DriftCase[]} */
const cases = [];
const add = (category, name, file, edits, expect) => cases.push({ category, name, file, edits, expect });
const ok = (file, rung) => ({ file, rung });
const refuse = (code) => ({ refuse: code });

// --- controls: the anchor is exact -------------------------------------------------------------
{
	const f = "const a = 1;\nconst b = 2;\n";
	add("exact", "one line", f, one("const b = 2;", "const b = 3;"), ok(R(f, "b = 2", "b = 3"), "exact"));
	const g = "function area(r) {\n  const pi = 3.14;\n  return pi * r * r;\n}\n";
	add(
		"exact",
		"function body",
		g,
		one("  const pi = 3.14;\n  return pi * r * r;", "  return Math.PI * r * r;"),
		ok("function area(r) {\n  return Math.PI * r * r;\n}\n", "exact"),
	);
	const h = "keep\ndrop me\nkeep too\n";
	add("exact", "delete a line", h, one("drop me\n", ""), ok("keep\nkeep too\n", "exact"));
	const i = "alpha\nbeta\n";
	add("exact", "insert after", i, one("alpha\n", "alpha\nalpha2\n"), ok("alpha\nalpha2\nbeta\n", "exact"));
}

// --- smart quotes --------------------------------------------------------------------------------
{
	const f = '// Say “hello” to the user\nfunction greet() {\n  return "hi";\n}\n';
	add(
		"quotes",
		"curly quotes in the changed line",
		f,
		one('// Say "hello" to the user', '// Say "hello" to every user'),
		ok(R(f, "// Say “hello” to the user", '// Say "hello" to every user'), "normalized"),
	);
	const g = 'msg = "it’s done"\ncount = 1\n';
	add(
		"quotes",
		"curly apostrophe in a kept line",
		g,
		one('msg = "it\'s done"\ncount = 1', 'msg = "it\'s done"\ncount = 2'),
		ok('msg = "it’s done"\ncount = 2\n', "normalized"),
	);
	const h = "Don’t panic.\nKeep calm.\n";
	add(
		"quotes",
		"prose, kept line keeps its apostrophe",
		h,
		one("Don't panic.\nKeep calm.", "Don't panic.\nStay calm."),
		ok("Don’t panic.\nStay calm.\n", "normalized"),
	);
	const i = "a = “x”\nb = 1\nc = “y”\n";
	add(
		"quotes",
		"other curly quotes in the file stay",
		i,
		one('a = "x"', 'a = "z"'),
		ok('a = "z"\nb = 1\nc = “y”\n', "normalized"),
	);
}

// --- Unicode dashes and spaces ---------------------------------------------------------------
{
	const f = "// range 1–10\nlet r = 10;\n";
	add(
		"unicode",
		"en dash in a kept comment",
		f,
		one("// range 1-10\nlet r = 10;", "// range 1-10\nlet r = 20;"),
		ok("// range 1–10\nlet r = 20;\n", "normalized"),
	);
	const g = "Price:\u00a0100 EUR\nTax: 20\n";
	add(
		"unicode",
		"NBSP in the changed line",
		g,
		one("Price: 100 EUR", "Price: 120 EUR"),
		ok("Price: 120 EUR\nTax: 20\n", "normalized"),
	);
	const h = "x = a - b  # minus\ny = 0\n";
	add(
		"unicode",
		"Unicode minus in the anchor",
		h,
		one("x = a \u2212 b  # minus", "x = a + b  # plus"),
		ok("x = a + b  # plus\ny = 0\n", "normalized"),
	);
}

// --- trailing whitespace ---------------------------------------------------------------------
{
	const f = "function f() {  \n  return 1;\n}\n";
	add(
		"trailing-ws",
		"file has trailing blanks on a kept line",
		f,
		one("function f() {\n  return 1;\n}", "function f() {\n  return 2;\n}"),
		ok("function f() {  \n  return 2;\n}\n", "normalized"),
	);
	const g = "a = 1\nb = 2\n";
	add(
		"trailing-ws",
		"anchor has trailing blanks the file lacks",
		g,
		one("a = 1  \nb = 2", "a = 1\nb = 3"),
		ok("a = 1\nb = 3\n", "normalized"),
	);
	const h = "x = 1\t\ny = 2\nz = 3 \n";
	add(
		"trailing-ws",
		"other lines' trailing blanks stay",
		h,
		one("y = 2 ", "y = 5"),
		ok("x = 1\t\ny = 5\nz = 3 \n", "normalized"),
	);
	const i = "if (a) {\n  b();\n  \n  c();\n}\n";
	add(
		"trailing-ws",
		"blank line of spaces inside the anchor",
		i,
		one("if (a) {\n  b();\n\n  c();\n}", "if (a) {\n  b();\n\n  d();\n}"),
		ok("if (a) {\n  b();\n  \n  d();\n}\n", "normalized"),
	);
}

// --- collapsed or expanded inner spaces ------------------------------------------------------
{
	const f = "const short  = 1;\nconst longer = 2;\n";
	add(
		"collapsed-spaces",
		"aligned assignment",
		f,
		one("const short = 1;", "const short = 10;"),
		ok("const short = 10;\nconst longer = 2;\n", "normalized"),
	);
	const g = "x = 1 # note\n";
	add(
		"collapsed-spaces",
		"anchor doubles a space",
		g,
		one("x = 1  # note", "x = 2  # note"),
		ok("x = 2  # note\n", "normalized"),
	);
	const h = "a = 1    # one\nb = 2    # two\nc = 3    # three\n";
	add(
		"collapsed-spaces",
		"aligned comments, kept line stays aligned",
		h,
		one("a = 1 # one\nb = 2 # two", "a = 1 # one\nb = 20 # two"),
		ok("a = 1    # one\nb = 20 # two\nc = 3    # three\n", "normalized"),
	);
	const i = "key:\tvalue\nother:\tthing\n";
	add(
		"collapsed-spaces",
		"tab inside a line",
		i,
		one("key: value", "key: VALUE"),
		ok("key: VALUE\nother:\tthing\n", "normalized"),
	);
}

// --- tabs vs spaces ---------------------------------------------------------------------------
{
	const f = "func a() {\n\tif x {\n\t\treturn 1\n\t}\n}\n";
	add(
		"tabs-spaces",
		"Go file with tabs, anchor with spaces",
		f,
		one("    if x {\n        return 1\n    }", "    if x {\n        return 2\n        // done\n    }"),
		ok("func a() {\n\tif x {\n\t\treturn 2\n\t\t// done\n\t}\n}\n", "indentation"),
	);
	const g = "function f() {\n  if (x) {\n    y();\n  }\n}\n";
	add(
		"tabs-spaces",
		"2-space file, anchor with tabs",
		g,
		one("\tif (x) {\n\t\ty();\n\t}", "\tif (x) {\n\t\ty();\n\t\tz();\n\t}"),
		ok("function f() {\n  if (x) {\n    y();\n    z();\n  }\n}\n", "indentation"),
	);
	const h = "build:\n\tgcc -o app main.c\n\nclean:\n\trm -f app\n";
	add(
		"tabs-spaces",
		"Makefile recipe stays tab-indented",
		h,
		one("clean:\n    rm -f app", "clean:\n    rm -f app *.o"),
		ok("build:\n\tgcc -o app main.c\n\nclean:\n\trm -f app *.o\n", "indentation"),
	);
	const i = "def f():\n\tx = 1\n\treturn x\n";
	add(
		"tabs-spaces",
		"tab-indented Python, anchor with spaces",
		i,
		one("def f():\n    x = 1\n    return x", "def f():\n    x = 2\n    return x"),
		ok("def f():\n\tx = 2\n\treturn x\n", "indentation"),
	);
	const j = "    call(a)\n    call(b)\n";
	add(
		"tabs-spaces",
		"one line, tab for spaces",
		j,
		one("\tcall(b)", "\tcall(c)"),
		ok("    call(a)\n    call(c)\n", "indentation"),
	);
	const k = "struct p {\n\tint x;\n\tint y;\n};\n";
	add(
		"tabs-spaces",
		"C struct with tabs, anchor with 2 spaces",
		k,
		one("struct p {\n  int x;\n  int y;\n};", "struct p {\n  int x;\n  int y;\n  int z;\n};"),
		ok("struct p {\n\tint x;\n\tint y;\n\tint z;\n};\n", "indentation"),
	);
}

// --- a uniform indentation offset ------------------------------------------------------------
{
	const f = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n";
	add(
		"indent-offset",
		"Python method sent dedented",
		f,
		one("def f(self):\n    return 1", "def f(self):\n    if self:\n        return 2\n    return 1"),
		ok(
			"class A:\n    def f(self):\n        if self:\n            return 2\n        return 1\n\n    def g(self):\n        pass\n",
			"indentation",
		),
	);
	const g = "class A {\n    run() {\n        if (ok) {\n            go();\n        }\n    }\n}\n";
	add(
		"indent-offset",
		"nested JS block sent dedented",
		g,
		one("if (ok) {\n    go();\n}", "if (ok) {\n    go();\n    done();\n}"),
		ok(R(g, "            go();\n", "            go();\n            done();\n"), "indentation"),
	);
	const h = "def f():\n    return 1\n";
	add(
		"indent-offset",
		"anchor over-indented",
		h,
		one("        def f():\n            return 1", "        def f():\n            return 2"),
		ok("def f():\n    return 2\n", "indentation"),
	);
	const i = '{\n  "a": {\n    "b": 1,\n    "c": 2\n  }\n}\n';
	add(
		"indent-offset",
		"JSON lines sent flush left",
		i,
		one('"b": 1,\n"c": 2', '"b": 1,\n"c": 3'),
		ok(R(i, '"c": 2', '"c": 3'), "indentation"),
	);
	const j = "def f(x):\n    if x:\n        return 1\n    return 0\n";
	add(
		"indent-offset",
		"new branch at the anchor's own level",
		j,
		one("if x:\n    return 1\nreturn 0", "if x:\n    return 1\nelif x is None:\n    return -1\nreturn 0"),
		ok(
			"def f(x):\n    if x:\n        return 1\n    elif x is None:\n        return -1\n    return 0\n",
			"indentation",
		),
	);
	const k = 'services:\n  web:\n    image: nginx\n    ports:\n      - "80:80"\n';
	add(
		"indent-offset",
		"YAML mapping sent flush left",
		k,
		one('image: nginx\nports:\n  - "80:80"', 'image: nginx:1.25\nports:\n  - "80:80"\n  - "443:443"'),
		ok(
			'services:\n  web:\n    image: nginx:1.25\n    ports:\n      - "80:80"\n      - "443:443"\n',
			"indentation",
		),
	);
}

// --- another indentation width ---------------------------------------------------------------
{
	const f = "if a:\n    if b:\n        c()\n";
	add(
		"indent-width",
		"2-space anchor, 4-space file",
		f,
		one("if a:\n  if b:\n    c()", "if a:\n  if b:\n    c()\n    d()"),
		ok("if a:\n    if b:\n        c()\n        d()\n", "indentation"),
	);
	const g = "function g() {\n  return [\n    1,\n    2,\n  ];\n}\n";
	add(
		"indent-width",
		"4-space anchor, 2-space file",
		g,
		one("return [\n    1,\n    2,\n];", "return [\n    1,\n    2,\n    3,\n];"),
		ok("function g() {\n  return [\n    1,\n    2,\n    3,\n  ];\n}\n", "indentation"),
	);
	const h = "func f() {\n\tfor {\n\t\tbreak\n\t}\n}\n";
	add(
		"indent-width",
		"8-space anchor, tab file",
		h,
		one("for {\n        break\n}", "for {\n        continue\n}"),
		ok("func f() {\n\tfor {\n\t\tcontinue\n\t}\n}\n", "indentation"),
	);
}

// --- line endings ----------------------------------------------------------------------------
add("crlf", "CRLF file, LF anchor", "a\r\nb\r\nc\r\n", one("b\nc", "B\nC"), ok("a\r\nB\r\nC\r\n", "exact"));
add("crlf", "LF file, CRLF anchor", "x\ny\nz\n", one("y\r\nz", "Y\r\nZ"), ok("x\nY\nZ\n", "exact"));
add(
	"crlf",
	"CRLF file, tabs, anchor LF with spaces",
	"if (a) {\r\n\tb();\r\n}\r\n",
	one("if (a) {\n    b();\n}", "if (a) {\n    b();\n    c();\n}"),
	ok("if (a) {\r\n\tb();\r\n\tc();\r\n}\r\n", "indentation"),
);
add(
	"crlf",
	"mixed endings: untouched CRLF line stays, LF lines stay LF",
	"one\r\ntwo\nthree\n",
	one("two\nthree", "2\n3"),
	ok("one\r\n2\n3\n", "exact"),
);
add(
	"crlf",
	"CRLF file with trailing blanks on a kept line",
	"a = 1 \r\nb = 2\r\n",
	one("a = 1\nb = 2", "a = 1\nb = 3"),
	ok("a = 1 \r\nb = 3\r\n", "normalized"),
);

// --- compatibility forms (pi folds with NFKC) ---------------------------------------------------
{
	const f = 'greet = "你好，世界"\nother = "你好，世界！"\n';
	add(
		"compat",
		"ASCII comma for a fullwidth one",
		f,
		one('greet = "你好,世界"', 'greet = "你好,朋友"'),
		ok('greet = "你好,朋友"\nother = "你好，世界！"\n', "compat"),
	);
	const g = 'code = "ＡＢＣ１２３"\nlabel = "ＡＢＣ"\nlast = 1\n';
	add(
		"compat",
		"ASCII letters and digits for fullwidth ones, kept lines keep theirs",
		g,
		one('code = "ABC123"\nlabel = "ABC"', 'code = "ABC124"\nlabel = "ABC"'),
		ok('code = "ABC124"\nlabel = "ＡＢＣ"\nlast = 1\n', "compat"),
	);
	add(
		"compat",
		"fullwidth anchor for an ASCII file",
		"x = (1, 2)\ny = 3\n",
		one("x = （1， 2）", "x = (1, 3)"),
		ok("x = (1, 3)\ny = 3\n", "compat"),
	);
	add("compat", "two fullwidth places", "a：1\nb\na：1\n", one("a:1", "a:2"), refuse("AMBIGUOUS_MATCH"));
	add("compat", "a ligature is not folded", "ﬁle = 1\n", one("file = 1", "file = 2"), refuse("NO_MATCH"));
}

// --- the final newline -----------------------------------------------------------------------
add("eof-newline", "file lacks the final newline", "a\nb", one("b\n", "c\n"), ok("a\nc", "blankLines"));
add(
	"eof-newline",
	"two lines, file lacks the final newline",
	"x = 1\ny = 2",
	one("x = 1\ny = 2\n", "x = 1\ny = 3\n"),
	ok("x = 1\ny = 3", "blankLines"),
);
add(
	"eof-newline",
	"no final newline and tabs",
	"def f():\n\treturn 1",
	one("def f():\n    return 1\n", "def f():\n    return 2\n"),
	ok("def f():\n\treturn 2", "blankLines"),
);

// --- blank lines -----------------------------------------------------------------------------
add(
	"blank-lines",
	"anchor has one blank line, file two",
	"def a():\n    pass\n\n\ndef b():\n    pass\n",
	one("def a():\n    pass\n\ndef b():\n    pass", "def a():\n    pass\n\ndef b():\n    return 1"),
	ok("def a():\n    pass\n\n\ndef b():\n    return 1\n", "blankLines"),
);
add(
	"blank-lines",
	"anchor leaves out a blank line",
	"import os\n\ndef main():\n    pass\n",
	one("import os\ndef main():\n    pass", "import os\ndef main():\n    run()"),
	ok("import os\n\ndef main():\n    run()\n", "blankLines"),
);
add(
	"blank-lines",
	"anchor adds a blank line",
	"a()\nb()\nc()\n",
	one("a()\n\nb()", "a()\n\nB()"),
	ok("a()\nB()\nc()\n", "blankLines"),
);
add(
	"blank-lines",
	"anchor starts with blank lines the file lacks",
	"top\nfoo()\nbar()\n",
	one("\n\nfoo()\nbar()", "\n\nfoo()\nbaz()"),
	ok("top\nfoo()\nbaz()\n", "blankLines"),
);
add(
	"blank-lines",
	"anchor ends with blank lines the file lacks",
	"a\nb\nc\n",
	one("b\n\n\n", "B\n\n\n"),
	ok("a\nB\nc\n", "blankLines"),
);
add(
	"blank-lines",
	"anchor begins with a blank line, one level shallower: re-indented by its first line",
	"class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n",
	one("\ndef g(self):\n    return 2", "\ndef g(self):\n    x = 1\n    return x"),
	ok(
		"class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        x = 1\n        return x\n",
		"indentation",
	),
);
add(
	"blank-lines",
	"anchor begins with a blank line, spaces for the file's tabs",
	"class A:\n\tdef f(self):\n\t\treturn 1\n\n\tdef g(self):\n\t\treturn 2\n",
	one("\ndef g(self):\n    return 2", "\ndef g(self):\n    if x:\n        return 3"),
	ok("class A:\n\tdef f(self):\n\t\treturn 1\n\n\tdef g(self):\n\t\tif x:\n\t\t\treturn 3\n", "indentation"),
);
add(
	"indent-offset",
	"anchor starts mid-line, its next line indented otherwise: refused, never pasted unindented",
	"function f() {\n    if (x) { doA();\n        doB();\n    }\n}\n",
	one("doA();\n  doB();", "doA();\n  doC();\n  doD();"),
	refuse("NO_MATCH"),
);
add(
	"blank-lines",
	"dedented, with fewer blank lines",
	"class A:\n    x = 1\n\n\n    y = 2\n",
	one("x = 1\n\ny = 2", "x = 1\n\ny = 3"),
	ok("class A:\n    x = 1\n\n\n    y = 3\n", "blankLines"),
);

// --- Python: the result must stay valid Python -----------------------------------------------
{
	add(
		"python",
		"tab-indented, nested line added with spaces",
		"def f(x):\n\tif x:\n\t\treturn 1\n\treturn 0\n",
		one("    if x:\n        return 1", "    if x:\n        log(x)\n        return 1"),
		ok("def f(x):\n\tif x:\n\t\tlog(x)\n\t\treturn 1\n\treturn 0\n", "indentation"),
	);
	add(
		"python",
		"2-space file, 4-space anchor, nested block",
		"def f():\n  for i in r:\n    print(i)\n",
		one(
			"def f():\n    for i in r:\n        print(i)",
			"def f():\n    for i in r:\n        if i:\n            print(i)",
		),
		ok("def f():\n  for i in r:\n    if i:\n      print(i)\n", "indentation"),
	);
	add(
		"python",
		"flush-left anchor, try/except added",
		"class S:\n    def load(self):\n        data = read()\n        return data\n",
		one(
			"data = read()\nreturn data",
			"try:\n    data = read()\nexcept OSError:\n    data = None\nreturn data",
		),
		ok(
			"class S:\n    def load(self):\n        try:\n            data = read()\n        except OSError:\n            data = None\n        return data\n",
			"indentation",
		),
	);
	const d =
		"class A:\n    @property\n    def x(self):\n        return 1\n\n    @property\n    def y(self):\n        return 2\n";
	add(
		"python",
		"decorated method, repeated decorator line",
		d,
		one("@property\ndef y(self):\n    return 2", "@property\ndef y(self):\n    return 3"),
		ok(R(d, "return 2", "return 3"), "indentation"),
	);
	add(
		"python",
		"same method in two classes: ambiguous once dedented",
		"class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n",
		one("def f(self):\n    return 1", "def f(self):\n    return 2"),
		refuse("AMBIGUOUS_MATCH"),
	);
	add(
		"python",
		"anchor's relative indentation differs from the file's",
		"def f():\n    if a:\n        b()\n    c()\n",
		one("if a:\n    b()\n    c()", "if a:\n    b()\n    c()\n    d()"),
		refuse("NO_MATCH"),
	);
	add(
		"python",
		"for/else added at the loop's level",
		"def run():\n    for x in xs:\n        use(x)\n",
		one("for x in xs:\n    use(x)", "for x in xs:\n    use(x)\nelse:\n    done()"),
		ok("def run():\n    for x in xs:\n        use(x)\n    else:\n        done()\n", "indentation"),
	);
	add(
		"python",
		"one tab-indented line, a line added below its level",
		"def run():\n    for x in xs:\n        use(x)\n    return\n",
		one("\tuse(x)", "\tuse(x)\nlog()"),
		ok("def run():\n    for x in xs:\n        use(x)\n    log()\n    return\n", "indentation"),
	);
}

// --- several drifts at once ------------------------------------------------------------------
add(
	"combined",
	"tabs and curly quotes",
	'func main() {\n\t// say “hi”\n\tfmt.Println("hi")\n}\n',
	one('    // say "hi"\n    fmt.Println("hi")', '    // say "hi"\n    fmt.Println("hello")'),
	ok('func main() {\n\t// say “hi”\n\tfmt.Println("hello")\n}\n', "indentation"),
);
add(
	"combined",
	"offset and trailing blanks",
	"  a = 1  \n  b = 2\n",
	one("a = 1\nb = 2", "a = 1\nb = 20"),
	ok("  a = 1  \n  b = 20\n", "indentation"),
);
add(
	"combined",
	"CRLF, a missing blank line and no final newline",
	"x\r\n\r\ny",
	one("x\ny\n", "x\nz\n"),
	ok("x\r\n\r\nz", "blankLines"),
);
add(
	"combined",
	"collapsed spaces and an offset",
	"    total  =  a + b\n    return total\n",
	one("total = a + b\nreturn total", "total = a + b + c\nreturn total"),
	ok("    total = a + b + c\n    return total\n", "indentation"),
);

// --- several edits in one call ---------------------------------------------------------------
cases.push({
	category: "multi-edit",
	name: "one exact, one with tabs for spaces",
	file: "a = 1\nfunc() {\n\tb()\n}\n",
	edits: [
		{ oldText: "a = 1", newText: "a = 2" },
		{ oldText: "func() {\n    b()\n}", newText: "func() {\n    c()\n}" },
	],
	expect: { file: "a = 2\nfunc() {\n\tc()\n}\n", rung: ["exact", "indentation"] },
});
cases.push({
	category: "multi-edit",
	name: "curly quotes and trailing blanks",
	file: "x = “1”\ny = 2 \nz = 3\n",
	edits: [
		{ oldText: 'x = "1"', newText: 'x = "one"' },
		{ oldText: "y = 2\nz = 3", newText: "y = 2\nz = 4" },
	],
	expect: { file: 'x = "one"\ny = 2 \nz = 4\n', rung: ["normalized", "normalized"] },
});

// --- elided anchors: `...` stands for code the model left out; must never match --------------
{
	const js = "function load() {\n  const a = read();\n  const b = parse(a);\n  return b;\n}\n";
	add(
		"elided",
		"bare ... line",
		js,
		one("function load() {\n  ...\n  return b;\n}", "x"),
		refuse("NO_MATCH"),
	);
	add(
		"elided",
		"// ... comment",
		js,
		one("function load() {\n  // ...\n  return b;", "function load() {\n  return null;"),
		refuse("NO_MATCH"),
	);
	const py = "def main():\n    setup()\n    run()\n    teardown()\n";
	add(
		"elided",
		"# ... existing code ...",
		py,
		one("def main():\n    # ... existing code ...\n    teardown()", "def main():\n    cleanup()"),
		refuse("NO_MATCH"),
	);
	add(
		"elided",
		"/* ... */ inside a line",
		js,
		one("function load() { /* ... */ return b; }", "x"),
		refuse("NO_MATCH"),
	);
	add(
		"elided",
		"Unicode ellipsis line",
		py,
		one("def main():\n    …\n    teardown()", "x"),
		refuse("NO_MATCH"),
	);
}

// --- near-miss identifiers: must never match ----------------------------------------------------
{
	const f = "const name = user.getUserName();\nconst id = user.user_id;\n";
	add("near-miss", "camelCase differs", f, one("user.getUsername()", "x"), refuse("NO_MATCH"));
	add("near-miss", "snake_case vs camelCase", f, one("user.userId", "x"), refuse("NO_MATCH"));
	add(
		"near-miss",
		"different number",
		"retries = 5;\n",
		one("retries = 3;", "retries = 4;"),
		refuse("NO_MATCH"),
	);
	add(
		"near-miss",
		"plural",
		"for item in items:\n    item.save()\n",
		one("items.save()", "x"),
		refuse("NO_MATCH"),
	);
	add(
		"near-miss",
		"typo in a keyword, with indentation drift",
		"def f(x):\n    if x:\n        return x\n",
		one("if x:\n    retrun x", "if x:\n    return -x"),
		refuse("NO_MATCH"),
	);
	add(
		"near-miss",
		"ASCII quote style differs",
		'print("hi")\n',
		one("print('hi')", "print('bye')"),
		refuse("NO_MATCH"),
	);
}

// --- ambiguous once normalized: must never guess ---------------------------------------------
add(
	"ambiguous",
	"two curly-quote variants",
	"x = ‘a’\nx = ’a’\n",
	one("x = 'a'", "x = 'b'"),
	refuse("AMBIGUOUS_MATCH"),
);
add(
	"ambiguous",
	"tab anchor, two space-indented lines",
	"def f():\n    x = 1\ndef g():\n    x = 1\n",
	one("\tx = 1", "\tx = 2"),
	refuse("AMBIGUOUS_MATCH"),
);
add(
	"ambiguous",
	"collapsed spaces, two places",
	"a  = 1\na   = 1\n",
	one("a = 1", "a = 2"),
	refuse("AMBIGUOUS_MATCH"),
);
add(
	"ambiguous",
	"blank-line tolerant, two places",
	"foo()\n\nbar()\nfoo()\nbar()\n",
	one("foo()\n\n\nbar()", "foo()\nbaz()"),
	refuse("AMBIGUOUS_MATCH"),
);
add(
	"ambiguous",
	"trailing blanks, two places",
	"x = 1 \nx = 1\t\n",
	one("x = 1  ", "x = 2"),
	refuse("AMBIGUOUS_MATCH"),
);

// --- over-escaped anchors: the model typed an escape where the file has the character ----------
{
	const f = 'say("hi")\nnext()\n';
	add(
		"over-escaped",
		'\\" for a quote',
		f,
		one('say(\\"hi\\")', 'say(\\"hello\\")'),
		ok('say("hello")\nnext()\n', "unescaped"),
	);
	const g = "first line\nsecond line\nthird\n";
	add(
		"over-escaped",
		"\\n for a line break",
		g,
		one("first line\\nsecond line", "first line\\nline two"),
		ok("first line\nline two\nthird\n", "unescaped"),
	);
	const h = "echo $HOME\nls\n";
	add(
		"over-escaped",
		"\\$ for a dollar",
		h,
		one("echo \\$HOME", "echo \\$USER"),
		ok("echo $USER\nls\n", "unescaped"),
	);
	const i = "path = 'C:\\dir'\nx = 1\n";
	add(
		"over-escaped",
		"\\\\ for one backslash",
		i,
		one("path = 'C:\\\\dir'", "path = 'D:\\\\dir'"),
		ok("path = 'D:\\dir'\nx = 1\n", "unescaped"),
	);
	const j = "msg = 'it''s'\nit's\n";
	add(
		"over-escaped",
		"\\' for an apostrophe",
		j,
		one("it\\'s\n", "it is\n"),
		ok("msg = 'it''s'\nit is\n", "unescaped"),
	);
	const k = 'printf("a\\n");\n';
	add(
		"over-escaped",
		"control: a real \\n in the file matches exactly",
		k,
		one('printf("a\\n");', 'printf("b\\n");'),
		ok('printf("b\\n");\n', "exact"),
	);
	const m = 'a = "x"\nb = "x"\n';
	add(
		"over-escaped",
		"still refuses ambiguity after unescaping",
		m,
		one('\\"x\\"', '\\"y\\"'),
		refuse("AMBIGUOUS_MATCH"),
	);
}

// --- Unicode compatibility forms: fullwidth letters, digits, punctuation; composed accents -------
{
	const f = "ｖａｌｕｅ ＝ １２\nnext\n";
	add(
		"unicode-compat",
		"fullwidth letters and digits in the file",
		f,
		one("value = 12", "value = 13"),
		ok("value = 13\nnext\n", "compat"),
	);
	const g = "call（a，b）\nnext\n";
	add(
		"unicode-compat",
		"fullwidth punctuation in the file",
		g,
		one("call(a,b)", "call(a,c)"),
		ok("call(a,c)\nnext\n", "compat"),
	);
	const h = "cafe\u0301 = 1\nnext\n";
	add(
		"unicode-compat",
		"decomposed accent in the file, composed in the anchor",
		h,
		one("caf\u00e9 = 1", "caf\u00e9 = 2"),
		ok("caf\u00e9 = 2\nnext\n", "compat"),
	);
	const i = "caf\u00e9 = 1\nnext\n";
	add(
		"unicode-compat",
		"composed accent in the file, decomposed in the anchor",
		i,
		one("cafe\u0301 = 1\nnext", "cafe\u0301 = 1\nlast"),
		ok("caf\u00e9 = 1\nlast\n", "compat"),
	);
	add(
		"unicode-compat",
		"a different letter is still refused",
		"caf\u00e8 = 1\n",
		one("caf\u00e9 = 1", "x"),
		refuse("NO_MATCH"),
	);
}

// --- whitespace inserted or dropped between tokens inside a line ---------------------------------
{
	const f = "  result = myFunc(a, b);\n  done();\n";
	add(
		"token-spacing",
		"spaces inside the parentheses in the anchor",
		f,
		one("  result = myFunc( a, b );", "  result = myFunc(a, c);"),
		ok("  result = myFunc(a, c);\n  done();\n", "spacing"),
	);
	const g = "if (x == 1) {\n  go();\n}\n";
	add(
		"token-spacing",
		"spaces dropped around operators in the anchor",
		g,
		one("if (x==1) {\n  go();", "if (x==1) {\n  stop();"),
		ok("if (x == 1) {\n  stop();\n}\n", "spacing"),
	);
	const h = "let total = sum(items);\n";
	add(
		"token-spacing",
		"a space between two words is not spacing drift",
		h,
		one("lettotal = sum(items);", "let total = 0;"),
		refuse("NO_MATCH"),
	);
	const i = "f( a );\nf(a);\n";
	add(
		"token-spacing",
		"two places once spacing is ignored",
		`${i}g( a );\n`,
		one("g(a);", "g(b);"),
		ok(`${i}g(b);\n`, "spacing"),
	);
	add(
		"token-spacing",
		"ambiguous once spacing is ignored",
		"h( a );\nh(a );\n",
		one("h(a)", "h(b)"),
		refuse("AMBIGUOUS_MATCH"),
	);
}

export const CASES = cases;

// --- patch-shaped cases: the same drift, sent as an apply_patch patch ----------------------------
// `patch` names the file FILE; the runner substitutes the case's file name. `rungs` is what keel's
// apply_patch reports per hunk (exact, rstrip, trim, fold, blankLines, append).

/** @type {import("./corpus.d.mts").PatchCase[]} */
const patchCases = [];
const U = (...lines) =>
	["*** Begin Patch", "*** Update File: FILE", ...lines, "*** End Patch", ""].join("\n");
const addPatch = (name, file, patch, expect) =>
	patchCases.push({ category: "patch", name, file, patch, expect });
const landed = (file, rungs) => ({ file, rungs });

addPatch("exact hunk", "a\nb\nc\n", U("@@", " a", "-b", "+B", " c"), landed("a\nB\nc\n", ["exact"]));
addPatch(
	"trailing blanks in the file's context lines",
	"if x:   \n    y = 1\nz\n",
	U("@@", " if x:", "-    y = 1", "+    y = 2", " z"),
	landed("if x:   \n    y = 2\nz\n", ["rstrip"]),
);
addPatch(
	"indentation offset: added lines re-indented into the file",
	"class A:\n        def f(self):\n            return 1\n",
	U("@@", "     def f(self):", "-        return 1", "+        y = 2", "+        return y"),
	landed("class A:\n        def f(self):\n            y = 2\n            return y\n", ["trim"]),
);
addPatch(
	"curly quotes in a context line: the file keeps them",
	"// Say \u201chello\u201d\nlet n = 1;\n",
	U("@@", ' // Say "hello"', "-let n = 1;", "+let n = 2;"),
	landed("// Say \u201chello\u201d\nlet n = 2;\n", ["fold"]),
);
addPatch(
	"an en dash in the removed line",
	"range 1\u20132\nnext\n",
	U("@@", "-range 1-2", "+range 1-3", " next"),
	landed("range 1-3\nnext\n", ["fold"]),
);
addPatch(
	"the patch drops a blank line the file has",
	"def f():\n    a = 1\n\n    return a\n",
	U("@@", " def f():", "     a = 1", "-    return a", "+    return a + 1"),
	landed("def f():\n    a = 1\n\n    return a + 1\n", ["blankLines"]),
);
addPatch(
	"CRLF file, LF patch: endings kept, new lines CRLF",
	"one\r\ntwo\r\nthree\r\n",
	U("@@", " one", "-two", "+TWO", "+2.5", " three"),
	landed("one\r\nTWO\r\n2.5\r\nthree\r\n", ["exact"]),
);
addPatch(
	"no final newline stays without one",
	"first\nlast",
	U("@@", " first", "-last", "+LAST"),
	landed("first\nLAST", ["exact"]),
);
addPatch(
	"@@ context picks the second of two identical blocks",
	"def a():\n    return 0\ndef b():\n    return 0\n",
	U("@@ def b():", "-    return 0", "+    return 1"),
	landed("def a():\n    return 0\ndef b():\n    return 1\n", ["exact"]),
);
addPatch(
	"*** End of File picks the last occurrence",
	"x\nmid\nx\n",
	U("@@", "-x", "+X", "*** End of File"),
	landed("x\nmid\nX\n", ["exact"]),
);
addPatch(
	"a stray blank line before *** End Patch",
	"a\nb\n",
	U("@@", " a", "-b", "+B", ""),
	landed("a\nB\n", ["exact"]),
);
addPatch("first hunk without @@", "k\nv\n", U(" k", "-v", "+V"), landed("k\nV\n", ["exact"]));
addPatch(
	"heredoc wrapper and padded markers",
	"p\nq\n",
	[
		"<<'EOF'",
		"  *** Begin Patch",
		" *** Update File: FILE",
		"@@",
		"-p",
		"+P",
		"*** End Patch  ",
		"EOF",
		"",
	].join("\n"),
	landed("P\nq\n", ["exact"]),
);
addPatch(
	"two hunks, in file order, each after the previous",
	"v = 0\nsep 1\nv = 0\nsep 2\nw = 0\n",
	U("@@", " sep 1", "-v = 0", "+v = 1", "@@", " sep 2", "-w = 0", "+w = 2"),
	landed("v = 0\nsep 1\nv = 1\nsep 2\nw = 2\n", ["exact", "exact"]),
);
addPatch(
	"context that matches in two places is refused, not applied to the first",
	"v = 0\nsep\nv = 0\nsep\nv = 0\n",
	U("@@", "-v = 0", "+v = 1", "@@", "-v = 0", "+v = 2"),
	{ refuse: "AMBIGUOUS_MATCH" },
);
addPatch(
	"context with trailing blanks that matches in two places is refused",
	"if a:\n    go()\nif a: \n    go()\n",
	U("@@", " if a:  ", "-    go()", "+    stop()"),
	{ refuse: "AMBIGUOUS_MATCH" },
);
addPatch(
	"tabs in the file, spaces in the patch: lines outside the change stay as they are",
	"func f() {\n\tif x {\n\t\ta()\n\t\tb()\n\t}\n\tc()\n}\n",
	U(
		"@@",
		" func f() {",
		"     if x {",
		"         a()",
		"-        b()",
		"+        B()",
		"+        d()",
		"     }",
		"     c()",
	),
	landed("func f() {\n\tif x {\n\t\ta()\n\t\tB()\n\t\td()\n\t}\n\tc()\n}\n", ["trim"]),
);
addPatch(
	"tabs in the file, spaces in the patch's context",
	"if (x) {\n\tfoo();\n}\n",
	U("@@", " if (x) {", "-    foo();", "+    bar();", " }"),
	landed("if (x) {\n\tbar();\n}\n", ["trim"]),
);
addPatch(
	"elided code is refused",
	"function f() {\n  a();\n  b();\n  c();\n}\n",
	U("@@", " function f() {", "   a();", "-  // ...", "+  d();", " }"),
	{ refuse: "NO_MATCH" },
);
addPatch(
	"a near-miss identifier is refused",
	"const total = sum(items);\n",
	U("@@", "-const totals = sum(items);", "+const total = sum(all);"),
	{ refuse: "NO_MATCH" },
);

export const PATCH_CASES = patchCases;
