"""Doxygen INPUT_FILTER for tfc's public headers (cmake/docs.cmake): the headers use plain C comments for the
contract of the declaration below, and trailing comments for the one on their line; this turns them into
Doxygen comments (/** and /**<) and protects the characters Doxygen would read as commands (backslash, @)."""
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()


def comment(m):
    body = m.group(2).replace("\\", "\\\\").replace("@", "\\@").replace("<", "\\<").replace(">", "\\>")
    body = body.replace("&", "\\&").replace("#", "\\#").replace("%", "\\%")
    return m.group(1) + body + "*/"


out = []
for line in text.split("\n"):
    code = line.split("/*", 1)[0]
    if "/*" in line and code.strip() and not code.strip().startswith("*"):
        line = code + "/**<" + line.split("/*", 1)[1]  # a trailing comment documents its own line
    out.append(line)
text = "\n".join(out)
text = re.sub(r"(?m)^(\s*)/\*(?![*!])", r"\1/**", text)  # a comment on its own documents what follows
text = re.sub(r"(/\*\*<?)(.*?)\*/", comment, text, flags=re.S)
sys.stdout.write(text)
