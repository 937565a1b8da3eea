"""A model directory beside tokenizer.json: config, special tokens and chat template.

The template is rendered as transformers (and so vLLM) renders it.

transformers compiles a template in a jinja2 ``ImmutableSandboxedEnvironment``
with ``trim_blocks`` and ``lstrip_blocks``, the ``loopcontrols`` extension and a
``{% generation %}`` tag, a ``tojson`` filter that does not escape HTML, and the
globals ``raise_exception`` and ``strftime_now``. It renders with ``messages``,
``tools=None``, ``documents=None``, ``add_generation_prompt`` and the tokenizer's
special tokens (``bos_token``, ``eos_token``, ...) as variables. All of that is
copied here, so the text is the server's text.

vLLM passes a message's content as a string, or, when the template loops over
``message['content']`` (its "openai" content format, found by reading the
template's syntax tree), as ``[{"type": "text", "text": ...}]``. The same
detection is done here, in a simpler form.

The template is found as transformers finds it: chat_template.jinja, then
chat_template.json, then tokenizer_config.json's ``chat_template``; the special
tokens come from tokenizer_config.json. Llama and Gemma tokenizer classes get
the BOS/EOS adding their config's ``add_bos_token``/``add_eos_token`` ask for,
as transformers rebuilds it when it loads them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadgen.errors import ScenarioError

if TYPE_CHECKING:
    import jinja2
    import jinja2.nodes
    from tokenizers import Tokenizer

__all__ = [
    "EXTRA_MESSAGE",
    "ChatTemplate",
    "ModelConfig",
    "apply_post_processor",
    "import_optional",
    "one_line",
    "read_model_dir",
]

EXTRA_MESSAGE = "workload.tokenizer needs the optional extra: pip install 'loadgen[tokenizers]'"
CONFIG_FILE = "tokenizer_config.json"
#: where a model directory may keep its chat template, before the config's key
TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")
#: transformers classes whose __init__ rebuilds the post-processor from add_bos/eos_token
BOS_EOS_CLASSES = frozenset({"LlamaTokenizer", "CodeLlamaTokenizer", "GemmaTokenizer"})
SPECIAL_KEYS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)


def import_optional(name: str) -> Any:
    """``importlib.import_module(name)``, or the one-line ScenarioError naming the extra."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise ScenarioError(EXTRA_MESSAGE) from None


class ChatTemplate:
    """A compiled chat template and the variables the server renders it with."""

    __slots__ = ("_template", "openai_content", "source", "variables")

    def __init__(self, text: str, special: Mapping[str, Any], *, source: str) -> None:
        """Compile ``text``; ScenarioError (naming ``source``) if it is not valid jinja."""
        jinja2 = import_optional("jinja2")
        self.source = source
        env = _environment()
        try:
            self._template = env.from_string(text)
            tree = env.parse(text)
        except jinja2.TemplateError as e:
            msg = f"{source}: chat_template: not a valid jinja template ({one_line(e)})"
            raise ScenarioError(msg) from None
        self.openai_content = _loops_over_content(tree, jinja2.nodes)
        self.variables: dict[str, Any] = {**special, "tools": None, "documents": None}

    def render(self, messages: Iterable[Mapping[str, str]]) -> str:
        """The prompt text for ``messages``, with the generation prompt, as the server makes it."""
        conversation = [self._message(m) for m in messages]
        try:
            text: str = self._template.render(
                messages=conversation, add_generation_prompt=True, **self.variables
            )
        except Exception as e:  # the template's own raise_exception, or a bad expression
            msg = f"{self.source}: chat_template: cannot render these messages ({one_line(e)})"
            raise ScenarioError(msg) from None
        return text

    def _message(self, m: Mapping[str, str]) -> dict[str, Any]:
        if self.openai_content and isinstance(m.get("content"), str):
            return {**m, "content": [{"type": "text", "text": m["content"]}]}
        return dict(m)


def _environment() -> jinja2.Environment:
    """The environment of transformers' ``_compile_jinja_template``."""
    import jinja2.ext
    import jinja2.nodes
    import jinja2.sandbox

    class GenerationTag(jinja2.ext.Extension):
        """``{% generation %}...{% endgeneration %}`` renders its body (assistant masks unused)."""

        tags = {"generation"}  # noqa: RUF012 (jinja2 types it as a plain set)

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_body")
            return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _body(self, caller: Callable[[], str]) -> str:
            return caller()

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTag, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


def _tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise_exception(message: str) -> None:
    import jinja2

    raise jinja2.TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


# -- vLLM's content-format detection, simplified ------------------------------------------


def _loops_over_content(tree: jinja2.nodes.Template, nodes: Any) -> bool:
    """True if the template has ``{% for x in message['content'] %}`` over a message loop."""
    aliases = {"messages"}
    changed = True
    while changed:  # names bound to messages, a slice of it or a filter of it
        changed = False
        for assign in tree.find_all(nodes.Assign):
            target = assign.target
            if (
                isinstance(target, nodes.Name)
                and target.name not in aliases
                and _refers_to(assign.node, aliases, None, nodes)
            ):
                aliases.add(target.name)
                changed = True
    loops = list(tree.find_all(nodes.For))
    message_vars = {
        loop.target.name
        for loop in loops
        if isinstance(loop.target, nodes.Name) and _refers_to(loop.iter, aliases, None, nodes)
    }
    return any(_refers_to(loop.iter, message_vars, "content", nodes) for loop in loops)


def _refers_to(node: Any, names: set[str], key: str | None, nodes: Any) -> bool:
    """``node`` is ``name``, ``name[key]``/``name.key``, or that under a filter, test or slice."""
    if isinstance(node, nodes.Filter | nodes.Test):
        return node.node is not None and _refers_to(node.node, names, key, nodes)
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Slice):
        return _refers_to(node.node, names, key, nodes)
    if key is None:
        return isinstance(node, nodes.Name) and node.ctx == "load" and node.name in names
    if isinstance(node, nodes.Getitem):
        return (
            _refers_to(node.node, names, None, nodes)
            and isinstance(node.arg, nodes.Const)
            and node.arg.value == key
        )
    if isinstance(node, nodes.Getattr):
        return _refers_to(node.node, names, None, nodes) and node.attr == key
    return False


# -- a model directory's tokenizer_config.json and template files ------------------------


@dataclass(slots=True, frozen=True)
class ModelConfig:
    """What a model directory says beside tokenizer.json."""

    config: dict[str, Any]  # tokenizer_config.json, {} if absent
    special: dict[str, Any]  # transformers' special_tokens_map: bos_token, eos_token, ...
    template: str | None  # the chat template's text
    template_source: str  # the file it came from (or would have), for messages


def read_model_dir(directory: Path) -> ModelConfig:
    """Read tokenizer_config.json and the chat template (ScenarioError, one line, if bad).

    The template is the first of chat_template.jinja, chat_template.json and the
    config's ``chat_template`` key (a string, or named templates: "default").
    """
    path = directory / CONFIG_FILE
    config = _read_json(path) if path.is_file() else {}
    special = _special_tokens(config)
    for name in TEMPLATE_FILES:
        file = directory / name
        if not file.is_file():
            continue
        if name.endswith(".jinja"):
            try:
                source = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                msg = f"{file}: workload.tokenizer: cannot read ({one_line(e)})"
                raise ScenarioError(msg) from None
            return ModelConfig(config, special, source, str(file))
        found = _read_json(file).get("chat_template")
        if isinstance(found, str) and found:
            return ModelConfig(config, special, found, str(file))
    value: Any = config.get("chat_template")
    if isinstance(value, list):  # named templates: the server uses "default"
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
        value = named.get("default")
    text = value if isinstance(value, str) and value else None
    return ModelConfig(config, special, text, str(path))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        msg = f"{path}: workload.tokenizer: not valid JSON ({one_line(e)})"
        raise ScenarioError(msg) from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: workload.tokenizer: expected a JSON object")
    return data


def _token_text(value: Any) -> str | None:
    """A special token as tokenizer_config.json writes it: a string or an AddedToken dict."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def _special_tokens(config: Mapping[str, Any]) -> dict[str, Any]:
    """transformers' ``special_tokens_map``: only the ones set, as the template sees them."""
    out: dict[str, Any] = {}
    for key in SPECIAL_KEYS:
        text = _token_text(config.get(key))
        if text:
            out[key] = text
    extra = config.get("additional_special_tokens")
    if isinstance(extra, list) and extra:
        out["additional_special_tokens"] = [t for t in map(_token_text, extra) if t]
    return out


def apply_post_processor(tok: Tokenizer, model: ModelConfig) -> None:
    """Llama/Gemma tokenizers: transformers rebuilds BOS/EOS adding from the config's flags."""
    config, special = model.config, model.special
    name = str(config.get("tokenizer_class") or "").removesuffix("Fast")
    if name not in BOS_EOS_CLASSES or not {"add_bos_token", "add_eos_token"} & config.keys():
        return
    from tokenizers import processors

    marks: dict[str, int] = {}
    ends: dict[str, str] = {}
    for key, default in (("bos_token", True), ("eos_token", False)):
        token = special.get(key)
        token_id = tok.token_to_id(token) if token else None
        if bool(config.get(f"add_{key}", default)) and token and token_id is not None:
            marks[token] = token_id
            ends[key] = token
    bos = f"{ends['bos_token']}:0 " if "bos_token" in ends else ""
    eos = f" {ends['eos_token']}:0" if "eos_token" in ends else ""
    single = f"{bos}$A:0{eos}"
    pair = f"{single} {bos.replace(':0', ':1')}$B:1{eos.replace(':0', ':1')}"
    tok.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=list(marks.items())
    )
