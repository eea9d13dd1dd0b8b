//! Cluster properties as the scheduler sees them (KubeFleet's property-based scheduling):
//! non-resource properties by name (`kubernetes-fleet.io/node-count`), and resource properties as
//! `resources.kubernetes-fleet.io/<total|allocatable|available>-<resource>`.

use super::quantity::Quantity;
use crate::member::Member;

/// Prefix of resource property names.
pub const RESOURCE_PROPERTY_PREFIX: &str = "resources.kubernetes-fleet.io/";

/// The value of a property of a cluster, if it reported one that parses as a quantity.
#[must_use]
pub fn property(member: &Member, name: &str) -> Option<Quantity> {
    let text = match name.strip_prefix(RESOURCE_PROPERTY_PREFIX) {
        Some(resource_property) => {
            let usage = &member.resource_usage.as_ref()?.usage;
            let (capacity, resource) = resource_property.split_once('-')?;
            let table = match capacity {
                "total" => &usage.capacity,
                "allocatable" => &usage.allocatable,
                "available" => &usage.available,
                _ => return None,
            };
            table.get(resource)?
        }
        None => &member.properties.get(name)?.value,
    };
    Quantity::parse(text).ok()
}
