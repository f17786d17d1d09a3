//! tessel's native network service (issue 12; under construction).
