//! The languages the navigation tools parse, told by a file's name (its extension) or, for a
//! script without one, by its `#!` line. Knows nothing of the grammars themselves, so that a
//! program can tell a supported file from another without linking them.

/// A language with a grammar and tags queries (`super::parse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Bash,
}

impl Lang {
    pub const ALL: [Lang; 13] = [
        Lang::Rust,
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Go,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
        Lang::CSharp,
        Lang::Ruby,
        Lang::Php,
        Lang::Bash,
    ];

    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Python => "Python",
            Lang::JavaScript => "JavaScript",
            Lang::TypeScript => "TypeScript",
            Lang::Tsx => "TSX",
            Lang::Go => "Go",
            Lang::Java => "Java",
            Lang::C => "C",
            Lang::Cpp => "C++",
            Lang::CSharp => "C#",
            Lang::Ruby => "Ruby",
            Lang::Php => "PHP",
            Lang::Bash => "Bash",
        }
    }

    /// The file extensions of the language (lower case, without the dot).
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &["rs"],
            Lang::Python => &["py", "pyi", "pyw"],
            Lang::JavaScript => &["js", "mjs", "cjs", "jsx"],
            Lang::TypeScript => &["ts", "mts", "cts"],
            Lang::Tsx => &["tsx"],
            Lang::Go => &["go"],
            Lang::Java => &["java"],
            Lang::C => &["c", "h"],
            Lang::Cpp => &[
                "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "tpp", "tcc", "txx",
                "inl",
            ],
            Lang::CSharp => &["cs"],
            Lang::Ruby => &["rb", "rake", "gemspec"],
            Lang::Php => &["php", "phtml", "php3", "php4", "php5", "php7", "phps"],
            Lang::Bash => &["sh", "bash"],
        }
    }

    /// The tags query (`queries/<lang>.scm`): which nodes are definitions (`super::parse`).
    /// Text only, so that the cache can tell entries made with other queries apart without
    /// linking any grammar.
    pub fn tags_query(self) -> &'static str {
        match self {
            Lang::Rust => include_str!("queries/rust.scm"),
            Lang::Python => include_str!("queries/python.scm"),
            Lang::JavaScript => include_str!("queries/javascript.scm"),
            Lang::TypeScript | Lang::Tsx => include_str!("queries/typescript.scm"),
            Lang::Go => include_str!("queries/go.scm"),
            Lang::Java => include_str!("queries/java.scm"),
            Lang::C => include_str!("queries/c.scm"),
            Lang::Cpp => include_str!("queries/cpp.scm"),
            Lang::CSharp => include_str!("queries/csharp.scm"),
            Lang::Ruby => include_str!("queries/ruby.scm"),
            Lang::Php => include_str!("queries/php.scm"),
            Lang::Bash => include_str!("queries/bash.scm"),
        }
    }

    /// The number the cache and the parse helper know the language by.
    pub fn id(self) -> u8 {
        self as u8
    }

    pub fn from_id(id: u8) -> Option<Lang> {
        Lang::ALL.get(usize::from(id)).copied()
    }

    /// The language of a file by its name's extension.
    pub fn of_name(name: &str) -> Option<Lang> {
        let (_, ext) = name.rsplit_once('.')?;
        if ext.is_empty() || ext.len() > 8 {
            return None;
        }
        let ext = ext.to_ascii_lowercase();
        Lang::ALL
            .into_iter()
            .find(|l| l.extensions().contains(&ext.as_str()))
    }

    /// The language of a file by its name, with its text for what the name leaves open: a
    /// script's `#!` line, and a `.h` header's language. A `.h` is C unless its text is
    /// C++ ([`Lang::reads_as_cpp`]): C++ projects name their headers `.h` as often as C ones
    /// do (ctags reads every `.h` as C++; a C header keeps C's grammar here).
    pub fn of_file(name: &str, text: &[u8]) -> Option<Lang> {
        match Lang::of_name(name) {
            Some(lang) => Some(lang.of_header(name, text)),
            None => Lang::of_shebang(text),
        }
    }

    /// The language of a file that its name says is `self`: C++ for a `.h` header whose text
    /// is ([`Lang::of_file`]). Telling reads all of a C header, so a caller that has no use
    /// for the difference between C and C++ yet may ask later.
    pub fn of_header(self, name: &str, text: &[u8]) -> Lang {
        let header = name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("h"));
        if self == Lang::C && header && reads_as_cpp(text) {
            Lang::Cpp
        } else {
            self
        }
    }

    /// The language of a script by its `#!` line (`#!/bin/sh`, `#!/usr/bin/env python3`).
    pub fn of_shebang(head: &[u8]) -> Option<Lang> {
        let line = head.strip_prefix(b"#!")?;
        let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
        let line = std::str::from_utf8(line).ok()?;
        let mut words = line.split_whitespace();
        let mut program = words.next()?.rsplit('/').next()?;
        if program == "env" {
            program = words.find(|w| !w.starts_with('-'))?;
        }
        let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        match program {
            "sh" | "bash" | "dash" | "ksh" | "zsh" => Some(Lang::Bash),
            "python" => Some(Lang::Python),
            "node" | "nodejs" => Some(Lang::JavaScript),
            "ruby" => Some(Lang::Ruby),
            "php" => Some(Lang::Php),
            _ => None,
        }
    }

    /// Every supported extension, for messages: ".rs, .py, …".
    pub fn extension_list() -> String {
        Lang::ALL
            .iter()
            .flat_map(|l| l.extensions().iter().take(2))
            .map(|e| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Whether C-family text holds what only C++ has, outside comments, literals and
/// preprocessor lines: a `::`, or one of the words `namespace`, `template`, `class` and the
/// access labels `public:`, `private:`, `protected:`. A C header's `extern "C"` guard for C++
/// readers is not among them.
fn reads_as_cpp(text: &[u8]) -> bool {
    let mut i = 0;
    let mut line_start = true;
    while i < text.len() {
        let b = text[i];
        match b {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' if line_start => {
                // A preprocessor line, with its continuations (a `\` before the newline).
                i = line_end(text, i);
                while i > 0 && i < text.len() && text[i - 1] == b'\\' {
                    i = line_end(text, i + 1);
                }
                continue;
            }
            _ => {}
        }
        line_start = false;
        match b {
            b'/' if text.get(i + 1) == Some(&b'/') => i = line_end(text, i),
            b'/' if text.get(i + 1) == Some(&b'*') => {
                i = memchr::memmem::find(&text[i + 2..], b"*/").map_or(text.len(), |n| i + n + 4);
            }
            b'"' | b'\'' => {
                i += 1;
                while i < text.len() && text[i] != b && text[i] != b'\n' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b':' if text.get(i + 1) == Some(&b':') => return true,
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                let rest = &text[i..];
                let label = || rest.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b':');
                match word {
                    b"namespace" | b"template" | b"class" => return true,
                    b"public" | b"private" | b"protected" if label() => return true,
                    _ => {}
                }
            }
            _ => i += 1,
        }
    }
    false
}

/// Where the line that `at` is on ends: its newline, or the text's end.
fn line_end(text: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |n| at + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_scripts() {
        assert_eq!(Lang::of_name("src/lib.rs"), Some(Lang::Rust));
        assert_eq!(Lang::of_name("A.TSX"), Some(Lang::Tsx));
        assert_eq!(Lang::of_name("x.hpp"), Some(Lang::Cpp));
        assert_eq!(Lang::of_name("bits/vector.tcc"), Some(Lang::Cpp));
        assert_eq!(Lang::of_name("README.md"), None);
        assert_eq!(Lang::of_name("Makefile"), None);
        assert_eq!(Lang::of_shebang(b"#!/bin/sh\necho"), Some(Lang::Bash));
        assert_eq!(
            Lang::of_shebang(b"#!/usr/bin/env -S python3.12 -u\n"),
            Some(Lang::Python)
        );
        assert_eq!(Lang::of_shebang(b"#!/usr/bin/perl\n"), None);
        assert_eq!(Lang::of_shebang(b"echo\n"), None);
        for l in Lang::ALL {
            assert_eq!(Lang::from_id(l.id()), Some(l));
        }
    }

    #[test]
    fn a_header_is_cpp_when_its_text_is() {
        let c = b"#ifndef X_H\n#define X_H 1 /* a::b */\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n// class A; namespace\nstruct s { int private_; };\nconst char *t = \"template::\";\nint f(int klass);\n#define M(a) a::b \\\n  class\n#endif\n";
        assert_eq!(Lang::of_file("x.h", c), Some(Lang::C));
        for cpp in [
            &b"namespace n { int f(); }\n"[..],
            b"int A::f() { return 0; }\n",
            b"template <typename T> T id(T t);\n",
            b"class A;\n",
            b"struct A {\n public:\n  int x;\n};\n",
            b"struct A {\n private :\n  int x;\n};\n",
            b"/* a */class A;\n",
            b"#define X 1 \\\n  + 2\nclass A;\n",
        ] {
            assert_eq!(
                Lang::of_file("x.H", cpp),
                Some(Lang::Cpp),
                "{}",
                String::from_utf8_lossy(cpp)
            );
            // Only a header's language is read from its text.
            assert_eq!(Lang::of_file("x.c", cpp), Some(Lang::C));
        }
        assert_eq!(Lang::of_file("x.h", b"int a; /* class"), Some(Lang::C));
        assert_eq!(Lang::of_file("run", b"#!/bin/sh\n"), Some(Lang::Bash));
    }
}
