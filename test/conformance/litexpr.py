"""lit's boolean expressions of features (REQUIRES, UNSUPPORTED, XFAIL),
for the conformance runners that read other projects' lit tests."""
import re


def holds(expr, feats, triple):
    """A lit boolean expression (&&, ||, !, parentheses, {{regex}})."""
    toks = re.findall(r"&&|\|\||!|\(|\)|[^\s&|!()]+", expr)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take():
        pos[0] += 1
        return toks[pos[0] - 1]

    def atom():
        t = take()
        if t == "!":
            return not atom()
        if t == "(":
            v = orx()
            take()
            return v
        if t == "*":
            return True
        if "{{" in t:
            rx = "".join(re.escape(p) if i % 2 == 0 else "(?:%s)" % p
                         for i, p in enumerate(re.split(r"\{\{|\}\}", t)))
            names = feats | {"target=" + triple}
            return any(re.fullmatch(rx, n) for n in names)
        return t in feats or t == "target=" + triple

    def chain(op, operand):
        """operand (op operand)*: every operand is read, then combined."""
        vals = [operand()]
        while peek() == op:
            take()
            vals.append(operand())
        return all(vals) if op == "&&" else any(vals)

    def andx():
        return chain("&&", atom)

    def orx():
        return chain("||", andx)

    return orx() if toks else True
