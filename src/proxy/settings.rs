//! One step from what the user said to a [`Config`]: flags win over `TOOLMEND_*` (and the
//! standard `OTEL_*`) variables, which win over the TOML file. The binary only collects the flags and hands over the
//! environment.

use super::config::{Config, ConfigError, FileConfig};
use std::net::SocketAddr;
use std::path::PathBuf;

/// What the command line said; `None` / `false`: not given.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub config: Option<PathBuf>,
    pub listen: Option<SocketAddr>,
    pub upstream: Option<String>,
    pub capture: Option<PathBuf>,
    pub allow_remote: bool,
    pub redact_inputs: bool,
}

/// Reads the file (`--config`, else `TOOLMEND_CONFIG`) and layers variables and flags over it.
/// `env` looks a variable up (`std::env::var`, or a table in tests).
pub fn resolve(flags: Flags, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
    resolve_file(flags, env).map(Config::from_file)
}

/// [`resolve`] before the defaults fill in what nobody said (`toolmend run` has defaults of
/// its own for some keys).
pub fn resolve_file(flags: Flags, env: impl Fn(&str) -> Option<String>) -> Result<FileConfig, ConfigError> {
    let path = flags.config.clone().or_else(|| env("TOOLMEND_CONFIG").map(PathBuf::from));
    let file = match path {
        Some(path) => FileConfig::load(&path)?,
        None => FileConfig::default(),
    };
    layer(file, flags, env)
}

/// The precedence itself, without reading any file.
pub fn layer(
    mut file: FileConfig,
    flags: Flags,
    env: impl Fn(&str) -> Option<String>,
) -> Result<FileConfig, ConfigError> {
    // An empty variable counts as unset.
    let env = |key: &str| env(key).filter(|value| !value.is_empty());
    if let Some(value) = env("TOOLMEND_LISTEN") {
        let listen = value.parse().map_err(|e| ConfigError::invalid("TOOLMEND_LISTEN", format!("'{value}': {e}")))?;
        file.listen = Some(listen);
    }
    if let Some(value) = env("TOOLMEND_UPSTREAM") {
        file.upstream = Some(value);
    }
    if let Some(value) = env("TOOLMEND_WORKERS") {
        let workers = value.parse().map_err(|e| ConfigError::invalid("TOOLMEND_WORKERS", format!("'{value}': {e}")))?;
        file.workers = Some(workers);
    }
    if let Some(value) = env("TOOLMEND_CAPTURE") {
        file.capture = Some(value.into());
    }
    if let Some(value) = env("TOOLMEND_ALLOW_REMOTE") {
        file.allow_remote = Some(parse_bool("TOOLMEND_ALLOW_REMOTE", &value)?);
    }
    if let Some(value) = env("TOOLMEND_REDACT_INPUTS") {
        file.redact_inputs = Some(parse_bool("TOOLMEND_REDACT_INPUTS", &value)?);
    }
    // The standard OTEL_* variables, over the file's [otel] section.
    file.otel = Some(file.otel.unwrap_or_default().with_env(env)?);
    file.listen = flags.listen.or(file.listen);
    file.upstream = flags.upstream.or(file.upstream);
    file.capture = flags.capture.or(file.capture);
    if flags.allow_remote {
        file.allow_remote = Some(true);
    }
    if flags.redact_inputs {
        file.redact_inputs = Some(true);
    }
    Ok(file)
}

/// `true/false/1/0/yes/no/on/off`, any case.
pub fn parse_bool(key: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::invalid(key, format!("'{value}' is not a boolean (true/false, 1/0, yes/no, on/off)"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |key| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_string())
    }

    #[test]
    fn flags_over_variables_over_the_file() {
        let file = || -> FileConfig {
            toml::from_str(
                "listen = \"127.0.0.1:1001\"\nupstream = \"http://file\"\nallow_remote = true\nredact_inputs = true\n",
            )
            .unwrap()
        };
        let flags = |listen: Option<&str>, allow_remote: bool| Flags {
            listen: listen.map(|l| l.parse().unwrap()),
            allow_remote,
            ..Flags::default()
        };
        // (variables, flags, expected listen, upstream, allow_remote, redact_inputs)
        type Case = (&'static [(&'static str, &'static str)], Flags, &'static str, &'static str, bool, bool);
        let cases: Vec<Case> = vec![
            (&[], flags(None, false), "127.0.0.1:1001", "http://file", true, true),
            (&[("TOOLMEND_LISTEN", "127.0.0.1:1002")], flags(None, false), "127.0.0.1:1002", "http://file", true, true),
            (
                &[("TOOLMEND_LISTEN", "127.0.0.1:1002")],
                flags(Some("127.0.0.1:1003"), false),
                "127.0.0.1:1003",
                "http://file",
                true,
                true,
            ),
            (&[("TOOLMEND_UPSTREAM", "http://env")], flags(None, false), "127.0.0.1:1001", "http://env", true, true),
            (&[("TOOLMEND_ALLOW_REMOTE", "false")], flags(None, false), "127.0.0.1:1001", "http://file", false, true),
            (
                &[("TOOLMEND_ALLOW_REMOTE", "0"), ("TOOLMEND_REDACT_INPUTS", "off")],
                flags(None, false),
                "127.0.0.1:1001",
                "http://file",
                false,
                false,
            ),
            (&[("TOOLMEND_ALLOW_REMOTE", "no")], flags(None, true), "127.0.0.1:1001", "http://file", true, true),
            (&[("TOOLMEND_REDACT_INPUTS", "No")], flags(None, false), "127.0.0.1:1001", "http://file", true, false),
        ];
        for (variables, flags, listen, upstream, allow_remote, redact) in cases {
            let config = Config::from_file(layer(file(), flags, env_of(variables)).unwrap());
            let got = (config.listen.to_string(), config.upstream.as_str(), config.allow_remote, config.redact_inputs);
            assert_eq!(got, (listen.to_string(), upstream, allow_remote, redact), "{variables:?}");
        }
    }

    #[test]
    fn defaults_without_file_variables_or_flags() {
        let config = Config::from_file(layer(FileConfig::default(), Flags::default(), |_| None).unwrap());
        assert_eq!(config.listen.to_string(), super::super::DEFAULT_LISTEN);
        assert!(!config.allow_remote && !config.redact_inputs);
    }

    #[test]
    fn booleans_take_every_usual_spelling_and_bad_values_name_the_variable() {
        for (text, expected) in [
            ("true", true),
            ("1", true),
            ("YES", true),
            ("on", true),
            ("false", false),
            ("0", false),
            ("no", false),
            ("Off", false),
        ] {
            assert_eq!(parse_bool("K", text).unwrap(), expected, "{text}");
        }
        let error = layer(FileConfig::default(), Flags::default(), env_of(&[("TOOLMEND_ALLOW_REMOTE", "maybe")]));
        assert!(error.unwrap_err().to_string().starts_with("TOOLMEND_ALLOW_REMOTE: 'maybe'"));
        let error = layer(FileConfig::default(), Flags::default(), env_of(&[("TOOLMEND_LISTEN", "here")]));
        assert!(error.unwrap_err().to_string().starts_with("TOOLMEND_LISTEN:"));
    }

    #[test]
    fn workers_come_from_the_variable_or_the_file_and_cannot_be_zero() {
        let file = FileConfig { workers: Some(5), ..FileConfig::default() };
        assert_eq!(Config::from_file(layer(file.clone(), Flags::default(), env_of(&[])).unwrap()).workers, 5);
        let layered = layer(file, Flags::default(), env_of(&[("TOOLMEND_WORKERS", "3")])).unwrap();
        assert_eq!(Config::from_file(layered).workers, 3);
        let error = layer(FileConfig::default(), Flags::default(), env_of(&[("TOOLMEND_WORKERS", "many")]));
        assert!(error.unwrap_err().to_string().starts_with("TOOLMEND_WORKERS: 'many'"));
        let zero = Config::from_file(
            layer(FileConfig::default(), Flags::default(), env_of(&[("TOOLMEND_WORKERS", "0")])).unwrap(),
        );
        assert_eq!(zero.check().unwrap_err().to_string(), "workers: must be at least 1");
        assert!(Config::default().workers >= 1, "one per CPU by default");
    }

    #[test]
    fn the_file_comes_from_the_flag_or_the_variable() {
        let path = std::env::temp_dir().join(format!("toolmend-settings-{}.toml", std::process::id()));
        std::fs::write(&path, "upstream = \"http://from-file\"\n").unwrap();
        let by_variable =
            resolve(Flags::default(), |key| (key == "TOOLMEND_CONFIG").then(|| path.display().to_string()));
        let by_flag = resolve(Flags { config: Some(path.clone()), ..Flags::default() }, |_| None);
        let _ = std::fs::remove_file(&path);
        assert_eq!(by_variable.unwrap().upstream, "http://from-file");
        assert_eq!(by_flag.unwrap().upstream, "http://from-file");
    }
}
