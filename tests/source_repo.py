"""A real git repository with real Python, TypeScript and Go sources (for index tests)."""

from __future__ import annotations

import subprocess
from pathlib import Path

RETRY_PY = '''"""Retry policies for settlement calls."""

import random


class RetryPolicy:
    """Exponential backoff with jitter."""

    def __init__(self, base: float, cap: float) -> None:
        self.base = base
        self.cap = cap

    def backoff(self, attempt: int) -> float:
        delay = min(self.cap, self.base * 2**attempt)
        return random.uniform(0, delay)

    def give_up(self, attempt: int) -> bool:
        return attempt > 8


def default_policy() -> RetryPolicy:
    return RetryPolicy(0.1, 30.0)
'''

LEDGER_PY = '''"""The settlement ledger."""

from settlement.retry import RetryPolicy, default_policy


class Ledger:
    def __init__(self) -> None:
        self.policy: RetryPolicy = default_policy()

    def post(self, entry: str) -> None:
        for attempt in range(3):
            if self.policy.give_up(attempt):
                raise RuntimeError(entry)


class Backoff:
    def backoff(self) -> float:
        return 1.0
'''

CLIENT_TS = """import { Session } from "./session";

export interface ClientOptions {
  baseUrl: string;
  retries: number;
}

export class ApiClient {
  constructor(private readonly options: ClientOptions) {}

  async fetchClaims(repo: string): Promise<string[]> {
    const session = new Session(this.options.baseUrl);
    return session.get(`/v1/claims?repo=${repo}`);
  }

  close(): void {}
}

export const makeClient = (baseUrl: string): ApiClient =>
  new ApiClient({ baseUrl, retries: 3 });
"""

SESSION_TS = """export class Session {
  constructor(private readonly baseUrl: string) {}

  async get(path: string): Promise<string[]> {
    return [this.baseUrl + path];
  }
}
"""

STORE_GO = """package storage

import "errors"

// ErrNotFound is returned when a key is missing.
var ErrNotFound = errors.New("not found")

// Store keeps values by key.
type Store struct {
	values map[string]string
}

// Get returns the value of key.
func (s *Store) Get(key string) (string, error) {
	v, ok := s.values[key]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

// Put sets key to value.
func (s *Store) Put(key, value string) {
	s.values[key] = value
}

// New makes an empty store.
func New() *Store {
	return &Store{values: map[string]string{}}
}
"""

FILES = {
    "src/settlement/__init__.py": "",
    "src/settlement/retry.py": RETRY_PY,
    "src/settlement/ledger.py": LEDGER_PY,
    "web/src/client.ts": CLIENT_TS,
    "web/src/session.ts": SESSION_TS,
    "internal/storage/store.go": STORE_GO,
    "README.md": "# demo\n",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_source_repo(repo: Path) -> str:
    """Create the repository at ``repo``; returns the first commit's OID."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test User")
    git(repo, "config", "user.email", "test@example.com")
    for path, text in FILES.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return commit_all(repo, "initial sources")
