"""gunicorn's reload reads the environment file by systemd's rules, not the shell's."""

from __future__ import annotations

from lightmysky.lib.envfile import read_environment_file


def test_the_file_is_read_as_systemd_reads_it(tmp_path):
    path = tmp_path / "lightmysky.env"
    path.write_text(
        "# a comment\n"
        "; another\n"
        "DEBUG=0\n"
        "SECRET_KEY=abc  # generated today\n"  # systemd keeps the note: so must the reload
        'SITE_URL="https://lightmysky.example.org"\n'
        "  ALLOWED_HOSTS = lightmysky.example.org  \n"
        "CSRF_TRUSTED_ORIGINS=https://a.example.org,\\\n"
        "https://b.example.org\n"
        "not an assignment\n"
    )
    assert read_environment_file(path) == {
        "DEBUG": "0",
        "SECRET_KEY": "abc  # generated today",
        "SITE_URL": "https://lightmysky.example.org",
        "ALLOWED_HOSTS": "lightmysky.example.org",
        "CSRF_TRUSTED_ORIGINS": "https://a.example.org,https://b.example.org",
    }
