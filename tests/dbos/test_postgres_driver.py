"""The PostgreSQL way without SQLAlchemy (`dbos._postgres`): the package's SQL text as psycopg reads it, and a URL as
messages show it, the same as SQLAlchemy shows it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pydantic_ai_ask_user.dbos._connection import psycopg_statement
from pydantic_ai_ask_user.dbos._db import shown_database_url
from pydantic_ai_ask_user.dbos._postgres import plain_postgres_url


@pytest.mark.parametrize(
    ('statement', 'expected'),
    [
        ('SELECT 1 FROM t WHERE id = :id AND s = :status', 'SELECT 1 FROM t WHERE id = %(id)s AND s = %(status)s'),
        ("SELECT (questions::jsonb ->> 'deadline')::float FROM t WHERE a = :a", None),
        ('UPDATE t SET a = 1 WHERE q LIKE \'%"deadline"%\' AND id = :id', None),
        ("SELECT ':not_a_parameter', 'it''s :x' FROM t WHERE b = :b", None),
        ('CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN x := :y; END $$', None),
    ],
)
def test_parameters_become_psycopg_s_and_nothing_else_changes(statement: str, expected: str | None) -> None:
    converted = psycopg_statement(statement)
    if expected is not None:
        assert converted == expected
    # Read back as psycopg reads it (`%%` is `%`), each parameter named again: the original statement.
    assert _named_back(converted) == statement


def _named_back(converted: str) -> str:
    import re

    return re.sub(r'%\((\w+)\)s', r':\1', converted).replace('%%', '%')


def test_a_cast_a_string_and_a_dollar_quoted_body_keep_their_colons() -> None:
    assert psycopg_statement("SELECT a::jsonb, ':x', $$ :y $$ WHERE c = :c") == (
        "SELECT a::jsonb, ':x', $$ :y $$ WHERE c = %(c)s"
    )
    assert psycopg_statement("SELECT 1 WHERE q LIKE '%a%' AND c = :c") == "SELECT 1 WHERE q LIKE '%%a%%' AND c = %(c)s"


@pytest.mark.parametrize(
    'url',
    [
        'postgresql://ask:hunter2@127.0.0.1:5432/questions',
        'postgresql+psycopg://ask@db.internal/questions',
        'postgresql://db.internal',
        'postgresql://ask:@h:5/d',
        'postgresql://ask:p%40ss@h/d',
        'postgresql://ask:secret@h/d?sslmode=require',
        'postgresql://[::1]:5432/d',
        'sqlite:///questions.sqlite',
        'sqlite+pysqlite:////tmp/a b.sqlite',
        'sqlite:////tmp/x.sqlite?timeout=3&mode=ro',
        'sqlite:///x.sqlite?a=1&a=2',
    ],
)
def test_a_url_is_shown_as_sqlalchemy_shows_it(url: str) -> None:
    assert shown_database_url(url) == sa.make_url(url).render_as_string(hide_password=True)


@pytest.mark.parametrize(
    ('url', 'conninfo'),
    [
        ('postgresql://ask:hunter2@127.0.0.1:5432/questions', 'postgresql://ask:hunter2@127.0.0.1:5432/questions'),
        ('postgresql+psycopg://ask@h/questions', 'postgresql://ask@h/questions'),
        ('postgresql://ask@h/questions?sslmode=require', None),  # options: through SQLAlchemy, as before
        ('postgresql+psycopg2://ask@h/questions', None),
        ('sqlite:///questions.sqlite', None),
    ],
)
def test_only_a_plain_postgres_url_is_opened_by_psycopg_alone(url: str, conninfo: str | None) -> None:
    assert plain_postgres_url(url) == conninfo
