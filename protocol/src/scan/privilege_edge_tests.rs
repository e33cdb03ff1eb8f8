//! `privilege.rs` at its edges (session 27's sweep, docs/mutation-testing.md):
//! a root shell by name, a host control switched back on for each control
//! that has a way back, a versioned interpreter granted in sudoers, the
//! home directory itself made world-writable, setuid written as `ua+s`
//! against setgid's `g+s`, and root's files in shared or hidden folders.

use crate::scan::Severity::{Critical, High, Low, Medium};
use crate::scan::testutil::assert_severity;

#[test]
fn sudo_names_a_root_shell_and_one_command_is_low() {
    // `su` and a shell as the first word are a root shell; `systemctl`'s
    // `s` and `apt`'s letters are no `-s` or `-i` flag, nor is a long option.
    assert_severity("sudo su", "priv.sudo", Medium);
    assert_severity("sudo su -", "priv.sudo", Medium);
    assert_severity("sudo bash", "priv.sudo", Medium);
    assert_severity("sudo /bin/zsh", "priv.sudo", Medium);
    assert_severity("sudo systemctl restart nginx", "priv.sudo", Low);
    assert_severity("sudo --preserve-env make install", "priv.sudo", Low);
}

#[test]
fn each_control_switched_back_on_is_a_diagnosis() {
    let probes = [
        ("sudo csrutil disable", "csrutil enable"),
        ("sudo spctl --master-disable", "sudo spctl --master-enable"),
        ("sudo ufw disable", "sudo ufw enable"),
        ("sudo setenforce 0", "sudo setenforce 1"),
    ];
    for (off, on) in probes {
        assert_severity(&format!("{off} && ./probe.sh && {on}\n"), "priv.disable-security", Medium);
        assert_severity(&format!("{off} && ./probe.sh\n"), "priv.disable-security", High);
    }
}

#[test]
fn a_versioned_interpreter_in_sudoers_is_still_the_interpreter() {
    // `ruby3.2` is `ruby` once the version's digits and dots are trimmed.
    let write =
        |grant: &str| format!("echo 'ops ALL=(root) NOPASSWD: {grant}' | sudo tee /etc/sudoers.d/ops");
    assert_severity(&write("/usr/bin/ruby3.2 /opt/x.rb"), "priv.sudoers", Critical);
    assert_severity(&write("/usr/bin/perl5.36 /opt/x.pl"), "priv.sudoers", Critical);
    // A program whose name ends in digits is named, not an interpreter.
    assert_severity(&write("/usr/sbin/smartctl7 -a /dev/sda"), "priv.sudoers", Medium);
}

#[test]
fn the_home_directory_itself_is_a_system_path() {
    for target in ["~", "~/", "$HOME", "$HOME/projects", "${HOME}/bin", "\"$HOME\""] {
        assert_severity(&format!("chmod -R 777 {target}"), "priv.world-writable", High);
    }
    // A folder named like the home variable, inside the project, is not.
    assert_severity("chmod -R 777 ./home", "priv.world-writable", Medium);
}

#[test]
fn setuid_by_letters_is_high_and_setgid_is_medium() {
    // `u` then `a` before `+s`: the setuid bit without the text `u+s`.
    assert_severity("chmod ua+s ./helper", "priv.setuid", High);
    // `g+s` is a setgid folder (three characters: no octal digit read).
    assert_severity("chmod g+s /srv/shared", "priv.setuid", Medium);
    assert_severity("chmod ug+s /srv/shared", "priv.setuid", Medium);
}

#[test]
fn root_owned_files_in_shared_or_hidden_folders_are_high() {
    for target in ["/tmp/helper", "/dev/shm/helper", "/home/u/.local/bin/tool"] {
        assert_severity(&format!("sudo chown root:root {target}"), "priv.chown-root", High);
    }
    assert_severity("sudo chown root:root /usr/local/bin/tool", "priv.chown-root", Medium);
}
