"""Message catalogs: the language chosen from the environment or the browser, and catalogs that match their sources."""

from __future__ import annotations

import gettext
import io
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from pydantic_ai_ask_user._i18n import DOMAIN, LOCALE_DIR
from pydantic_ai_ask_user._messages import CLI, NOTIFY, NOTIFY_PLURALS, TERMINAL, TERMINAL_PLURALS, WEB, WEB_PLURALS
from pydantic_ai_ask_user.i18n import available_languages, negotiate_http, negotiate_terminal, translator

PO_FILES = sorted(LOCALE_DIR.glob(f'*/LC_MESSAGES/{DOMAIN}.po'))
POT = LOCALE_DIR / f'{DOMAIN}.pot'


def test_korean_is_available_and_english_is_the_fallback() -> None:
    assert available_languages() == ('en', 'ko')
    assert [path.parent.parent.name for path in PO_FILES] == ['ko']


@pytest.mark.parametrize('po', PO_FILES, ids=lambda path: path.parent.parent.name)
def test_the_committed_mo_holds_exactly_what_its_po_compiles_to(po: Path) -> None:
    with po.open('rb') as source:
        catalog = read_po(source)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    fresh = gettext.GNUTranslations(compiled)
    with po.with_suffix('.mo').open('rb') as committed_file:
        committed = gettext.GNUTranslations(committed_file)
    assert committed._catalog == fresh._catalog  # type: ignore[attr-defined]
    assert len(committed._catalog) > 40  # type: ignore[attr-defined]


def test_the_template_holds_every_marked_message_in_src(tmp_path: Path) -> None:
    # What `make messages` extracts now is what the committed template holds: no marked string was left out.
    extracted = tmp_path / 'now.pot'
    subprocess.run(
        [sys.executable, '-m', 'babel.messages.frontend', 'extract', '--no-location', '--sort-output',
         '-k', 'Nn_:1,2', '-o', str(extracted), str(LOCALE_DIR.parent)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip

    def ids(path: Path) -> set[object]:
        with path.open('rb') as file:
            return {message.id if isinstance(message.id, str) else tuple(message.id) for message in read_po(file)}

    assert ids(extracted) == ids(POT)
    marked = {*TERMINAL, *TERMINAL_PLURALS, *WEB, *WEB_PLURALS, *CLI, *NOTIFY, *NOTIFY_PLURALS}
    assert ids(POT) - {''} == marked


@pytest.mark.parametrize('po', PO_FILES, ids=lambda path: path.parent.parent.name)
def test_every_message_is_translated_and_keeps_its_placeholders(po: Path) -> None:
    with po.open('rb') as source:
        catalog = read_po(source)
    with POT.open('rb') as source:
        template = read_po(source)
    assert {m.id if isinstance(m.id, str) else tuple(m.id) for m in catalog} == {
        m.id if isinstance(m.id, str) else tuple(m.id) for m in template
    }

    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}

    for message in catalog:
        if not message.id:
            continue
        assert not message.fuzzy, message.id
        ids = [message.id] if isinstance(message.id, str) else list(message.id)
        strings = [message.string] if isinstance(message.string, str) else list(message.string)
        assert all(strings), f'{message.id!r} is not translated'
        for text in strings:
            assert fields(text) == fields(ids[-1]), message.id
            assert not re.search(r'[\x00-\x1f\x7f]', text)


def test_translator_gives_korean_with_its_plural_rule_and_english_otherwise() -> None:
    ko = translator('ko')
    assert ko.language == 'ko'
    assert ko.gettext('Submit') == '보내기'
    assert ko.gettext('Decline to answer') == '답하지 않기'
    assert ko.ngettext('{count} question', '{count} questions', 1).format(count=1) == '질문 1개'
    assert ko.ngettext('{count} question', '{count} questions', 5).format(count=5) == '질문 5개'
    assert ko.gettext('a message with no translation') == 'a message with no translation'
    assert translator('ko-KR') is translator('ko-KR') is translator('ko') is translator('KO_kr.UTF-8')
    assert translator('fr') is translator('en') is translator('../../etc')
    assert translator('ko-KR').gettext('Submit') == '보내기'
    for other in ('en', 'fr', 'de-DE', '', '../../etc', 'x' * 100):
        english = translator(other)
        assert english.language == 'en'
        assert english.gettext('Submit') == 'Submit'
        assert english.ngettext('{count} question', '{count} questions', 2) == '{count} questions'


@pytest.mark.parametrize(
    ('environ', 'expected'),
    [
        ({}, 'en'),
        ({'LANG': 'ko_KR.UTF-8'}, 'ko'),
        ({'LANG': 'ko_KR.UTF-8@euro'}, 'ko'),
        ({'LANG': 'en_US.UTF-8', 'LC_MESSAGES': 'ko_KR.UTF-8'}, 'ko'),
        ({'LC_MESSAGES': 'ko_KR.UTF-8', 'LC_ALL': 'en_GB.UTF-8'}, 'en'),
        ({'LC_ALL': 'ko_KR.UTF-8', 'LANG': 'en_US.UTF-8'}, 'ko'),
        ({'LANG': 'en_US.UTF-8', 'LANGUAGE': 'ko:en'}, 'ko'),
        ({'LANG': 'en_US.UTF-8', 'LANGUAGE': 'fr:ko'}, 'ko'),
        ({'LANG': 'ko_KR.UTF-8', 'LANGUAGE': 'fr:de'}, 'ko'),
        ({'LANGUAGE': 'ko'}, 'ko'),
        ({'LANG': 'C', 'LANGUAGE': 'ko'}, 'en'),
        ({'LC_ALL': 'C.UTF-8', 'LANGUAGE': 'ko'}, 'en'),
        ({'LANG': 'POSIX', 'LANGUAGE': 'ko'}, 'en'),
        ({'LANG': 'fr_FR.UTF-8'}, 'en'),
        ({'LANG': '../../ko'}, 'en'),
    ],
)
def test_the_terminal_language_follows_gnu_gettext_precedence(environ: dict[str, str], expected: str) -> None:
    assert negotiate_terminal(environ) == expected


def test_the_terminal_language_defaults_to_this_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ('LANGUAGE', 'LC_ALL', 'LC_MESSAGES'):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('LANG', 'ko_KR.UTF-8')
    assert negotiate_terminal() == 'ko'


@pytest.mark.parametrize(
    ('header', 'expected'),
    [
        (None, 'en'),
        ('', 'en'),
        ('ko', 'ko'),
        ('ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7', 'ko'),
        ('en-US,en;q=0.9,ko;q=0.8', 'en'),
        ('fr-FR,fr;q=0.9,ko;q=0.5', 'ko'),
        ('en;q=0.5,ko;q=0.6', 'ko'),
        ('ko;q=0,fr', 'en'),
        ('ko;q=1.0', 'ko'),
        ('ko;q=1.5', 'en'),
        ('ko;q=abc,fr', 'en'),
        ('fr;q=0.9,ko;level=1;q=0.8', 'ko'),
        ('ko;Q=0.5', 'ko'),
        ('*', 'en'),
        ('fr,*;q=0.1,ko;q=0.05', 'en'),
        ('KO-kr', 'ko'),
        ('<script>,ko', 'ko'),
        ('ko\x1b[2J', 'en'),
        ('fr,' * 5000 + 'ko', 'en'),
    ],
)
def test_the_web_language_follows_accept_language_q_values(header: str | None, expected: str) -> None:
    assert negotiate_http(header) == expected
